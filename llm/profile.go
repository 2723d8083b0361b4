package llm

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Profile is what one provider needs of a request, after OpenCode's
// ProviderTransform (packages/opencode/src/provider/transform.ts), as data:
// each trait is applied by the request builder in one place (transform.go).
// The zero Profile sends requests unadapted.
type Profile struct {
	// Name names the profile (or the "+"-joined names of the rules that
	// made it).
	Name string `json:"name"`
	// ToolCallIDs rewrites tool-call ids, consistently in assistant calls
	// and tool results: IDsMistral (exactly 9 of [a-zA-Z0-9]), IDsAnthropic
	// ([a-zA-Z0-9_-]+); "" keeps them.
	ToolCallIDs IDFormat `json:"tool_call_ids,omitempty"`
	// NoUserAfterTool inserts an assistant message between a tool result
	// and a user message (Mistral rejects "user" right after "tool").
	NoUserAfterTool bool `json:"no_user_after_tool,omitempty"`
	// NoEmptyContent drops messages with empty content, omits the empty
	// content of assistant messages that call tools, and gives empty tool
	// results a placeholder (Anthropic rejects empty text blocks).
	NoEmptyContent bool `json:"no_empty_content,omitempty"`
	// Schema rewrites tool-parameter JSON Schemas to what the provider
	// accepts (SanitizeSchema); "" sends them as they are.
	Schema SchemaDialect `json:"schema,omitempty"`
	// CacheControl marks the system prompt and the last two messages with
	// cache_control breakpoints (Anthropic models behind OpenRouter or
	// LiteLLM), so the prompt prefix is read from the cache.
	CacheControl bool `json:"cache_control,omitempty"`
	// StoreFalse sends store: false (OpenAI keeps completions otherwise).
	StoreFalse bool `json:"store_false,omitempty"`
	// NoSampling drops temperature and top_p (OpenAI reasoning models accept
	// only the default).
	NoSampling bool `json:"no_sampling,omitempty"`
	// ReasoningEffort maps a requested effort to the value sent; a value ""
	// drops it; an effort not listed is sent as requested.
	ReasoningEffort map[string]string `json:"reasoning_effort,omitempty"`
	// ReasoningObject sends the effort as {"reasoning": {"effort": …}}
	// (OpenRouter) instead of reasoning_effort.
	ReasoningObject bool `json:"reasoning_object,omitempty"`
	// Temperature and TopP are sent when the request leaves them unset;
	// with FixedTemperature the temperature replaces the request's (a
	// model that accepts one value only).
	Temperature      *float64 `json:"temperature,omitempty"`
	TopP             *float64 `json:"top_p,omitempty"`
	FixedTemperature bool     `json:"fixed_temperature,omitempty"`
}

// IDFormat is a tool-call id format.
type IDFormat string

// Tool-call id formats.
const (
	IDsMistral   IDFormat = "mistral"   // exactly 9 of [a-zA-Z0-9]
	IDsAnthropic IDFormat = "anthropic" // [a-zA-Z0-9_-]+
)

// SchemaDialect is a JSON Schema dialect a provider accepts for tool
// parameters.
type SchemaDialect string

// Schema dialects.
const (
	SchemaGemini SchemaDialect = "gemini" // Gemini's OpenAPI 3.0 subset
)

// profileRule is one row of the profile table: it applies when the base
// URL's host ends with one of Hosts, or when the model name contains one of
// Models (or starts with one of ModelPrefixes, after any "vendor/" part),
// and, when Via is set, only behind one of those hosts.
type profileRule struct {
	Name          string
	Hosts         []string
	Models        []string
	ModelPrefixes []string
	Via           []string
	Traits        Profile
}

func f64(v float64) *float64 { return &v }

// profileRules is the table. Sources: OpenCode transform.ts (ids, message
// order, empty content, Gemini schema, caching, sampling defaults) and the
// providers' documented rejections (see llm/llmtest personalities).
func profileRules() []profileRule {
	return []profileRule{
		{Name: "openai", Hosts: []string{"api.openai.com"}, Traits: Profile{StoreFalse: true}},
		{Name: "openai-reasoning", ModelPrefixes: []string{"o1", "o3", "o4", "gpt-5"}, Traits: Profile{NoSampling: true}},
		{Name: "mistral", Hosts: []string{"api.mistral.ai"},
			Models: []string{"mistral", "codestral", "magistral", "devstral", "ministral", "pixtral", "mixtral"},
			Traits: Profile{ToolCallIDs: IDsMistral, NoUserAfterTool: true}},
		{Name: "anthropic", Hosts: []string{"api.anthropic.com"}, Models: []string{"claude"},
			Traits: Profile{ToolCallIDs: IDsAnthropic, NoEmptyContent: true}},
		{Name: "anthropic-cache", Via: []string{"openrouter.ai", "litellm"}, Models: []string{"claude", "anthropic"},
			Traits: Profile{CacheControl: true}},
		{Name: "gemini", Hosts: []string{"generativelanguage.googleapis.com", "aiplatform.googleapis.com"}, Models: []string{"gemini"},
			Traits: Profile{Schema: SchemaGemini, Temperature: f64(1), TopP: f64(0.95)}},
		{Name: "openrouter", Hosts: []string{"openrouter.ai"}, Traits: Profile{ReasoningObject: true}},
		// xAI: grok-4 rejects reasoning_effort; grok-3-mini takes low or high.
		{Name: "xai-grok-4", Models: []string{"grok-4"},
			Traits: Profile{ReasoningEffort: map[string]string{"minimal": "", "low": "", "medium": "", "high": ""}}},
		{Name: "xai-grok-3-mini", Models: []string{"grok-3-mini"},
			Traits: Profile{ReasoningEffort: map[string]string{"minimal": "low", "medium": "high"}}},
		// Moonshot: kimi-k2.5 and the thinking models take temperature 1 only.
		{Name: "moonshot-thinking", Models: []string{"kimi-k2.5", "kimi-k2-thinking"},
			Traits: Profile{Temperature: f64(1), FixedTemperature: true}},
		{Name: "moonshot", Models: []string{"kimi-k2"}, Traits: Profile{Temperature: f64(0.6)}},
		{Name: "qwen", Models: []string{"qwen"}, Traits: Profile{Temperature: f64(0.55), TopP: f64(1)}},
		{Name: "minimax", Models: []string{"minimax-m2"}, Traits: Profile{Temperature: f64(1), TopP: f64(0.95)}},
	}
}

// ProfileFor chooses the profile for a base URL and a model name: the merge
// of every rule of the table that applies (booleans or-ed; for values, the
// first rule that sets one wins). An endpoint no rule knows gets the zero
// Profile.
func ProfileFor(baseURL, model string) Profile {
	host := ""
	if u, err := url.Parse(baseURL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	model = strings.ToLower(model)
	base := model[strings.LastIndex(model, "/")+1:]
	var out Profile
	var names []string
	for _, r := range profileRules() {
		if !r.applies(host, model, base) {
			continue
		}
		names = append(names, r.Name)
		out = mergeProfile(out, r.Traits)
	}
	out.Name = strings.Join(names, "+")
	return out
}

func (r profileRule) applies(host, model, base string) bool {
	if len(r.Via) > 0 && !slices.ContainsFunc(r.Via, func(h string) bool { return strings.Contains(host, h) }) {
		return false
	}
	for _, h := range r.Hosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return true
		}
	}
	for _, m := range r.Models {
		if strings.Contains(model, m) {
			return true
		}
	}
	for _, p := range r.ModelPrefixes {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// NamedProfile returns the profile of one row of the table by name (as
// listed by ProfileNames), or "none" for the zero Profile.
func NamedProfile(name string) (Profile, bool) {
	if name == "none" {
		return Profile{Name: "none"}, true
	}
	for _, r := range profileRules() {
		if r.Name == name {
			p := r.Traits
			p.Name = name
			return p, true
		}
	}
	return Profile{}, false
}

// ProfileNames lists the names NamedProfile knows, sorted.
func ProfileNames() []string {
	names := []string{"none"}
	for _, r := range profileRules() {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	return names
}

func mergeProfile(a, b Profile) Profile {
	if a.ToolCallIDs == "" {
		a.ToolCallIDs = b.ToolCallIDs
	}
	if a.Schema == "" {
		a.Schema = b.Schema
	}
	if a.ReasoningEffort == nil {
		a.ReasoningEffort = b.ReasoningEffort
	}
	if a.Temperature == nil {
		a.Temperature, a.FixedTemperature = b.Temperature, b.FixedTemperature
	}
	if a.TopP == nil {
		a.TopP = b.TopP
	}
	a.NoUserAfterTool = a.NoUserAfterTool || b.NoUserAfterTool
	a.NoEmptyContent = a.NoEmptyContent || b.NoEmptyContent
	a.CacheControl = a.CacheControl || b.CacheControl
	a.StoreFalse = a.StoreFalse || b.StoreFalse
	a.NoSampling = a.NoSampling || b.NoSampling
	a.ReasoningObject = a.ReasoningObject || b.ReasoningObject
	return a
}
