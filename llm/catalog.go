package llm

import (
	"maps"
	"slices"
	"strings"
)

// Price is what a model costs, in USD per million tokens.
type Price struct {
	InputPerM float64 `json:"input_per_m" yaml:"input_per_m"`
	// CachedInputPerM is the price of input tokens read from a prompt cache;
	// 0 means no discount (billed at InputPerM).
	CachedInputPerM float64 `json:"cached_input_per_m,omitempty" yaml:"cached_input_per_m,omitempty"`
	OutputPerM      float64 `json:"output_per_m" yaml:"output_per_m"`
	// CacheWritePerM is the price of input tokens written to a prompt cache
	// (Anthropic); 0 means billed at InputPerM.
	CacheWritePerM float64 `json:"cache_write_per_m,omitempty" yaml:"cache_write_per_m,omitempty"`
}

// ModelInfo describes one model. Zero sizes mean unknown; a nil Price means
// the price is unknown, so cost is unknown (never 0).
type ModelInfo struct {
	Name          string   `json:"name" yaml:"name"`
	ContextWindow int      `json:"context_window,omitempty" yaml:"context_window,omitempty"` // tokens, input and output
	MaxOutput     int      `json:"max_output,omitempty" yaml:"max_output,omitempty"`         // tokens
	Price         *Price   `json:"price,omitempty" yaml:"price,omitempty"`
	Aliases       []string `json:"aliases,omitempty" yaml:"aliases,omitempty"` // other names of the same model
	// Wires lists the wires on which the model calls tools, the one to
	// choose first; empty means any wire (ChooseWire picks chat).
	Wires []Wire `json:"wires,omitempty" yaml:"wires,omitempty"`
	// NoReasoning marks a model known not to reason: OpenAI answers a
	// reasoning effort for it with a 400. False means it reasons or is
	// not known.
	NoReasoning bool `json:"no_reasoning,omitempty" yaml:"no_reasoning,omitempty"`
}

// Catalog maps model names to their sizes and prices. It is a value: With
// returns a new catalog and never changes the receiver.
type Catalog struct {
	models map[string]ModelInfo // by normalised name and alias
}

// NewCatalog returns a catalog of the given models.
func NewCatalog(models ...ModelInfo) Catalog {
	return Catalog{}.With(models...)
}

// DefaultCatalog returns a fresh catalog of the built-in models (see
// defaultModels for the figures and their sources).
func DefaultCatalog() Catalog { return NewCatalog(defaultModels()...) }

// With returns a copy of the catalog with models added or overridden (the
// task spec's overrides). An override of a known model keeps the known
// values of the fields it leaves zero (ContextWindow, MaxOutput, Price).
func (c Catalog) With(models ...ModelInfo) Catalog {
	out := Catalog{models: maps.Clone(c.models)}
	if out.models == nil {
		out.models = map[string]ModelInfo{}
	}
	for _, m := range models {
		if old, ok := out.models[normalise(m.Name)]; ok {
			if m.ContextWindow == 0 {
				m.ContextWindow = old.ContextWindow
			}
			if m.MaxOutput == 0 {
				m.MaxOutput = old.MaxOutput
			}
			if m.Price == nil {
				m.Price = old.Price
			}
			if m.Wires == nil {
				m.Wires = old.Wires
			}
			m.NoReasoning = m.NoReasoning || old.NoReasoning
			m.Aliases = append(slices.Clone(old.Aliases), m.Aliases...)
		}
		if m.Price != nil {
			p := *m.Price
			m.Price = &p
		}
		m.Wires = slices.Clone(m.Wires)
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			out.models[normalise(n)] = m
		}
	}
	return out
}

// Models returns every model once, sorted by name.
func (c Catalog) Models() []ModelInfo {
	seen := map[string]bool{}
	var out []ModelInfo
	for _, m := range c.models {
		if !seen[m.Name] {
			seen[m.Name] = true
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b ModelInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup finds a model by name, case-insensitively. It also accepts a
// provider prefix ("openai/gpt-4.1-mini", "anthropic/claude-sonnet-4.5"), a
// Vertex version ("claude-sonnet-4@20250514") and a dated or "-latest"
// snapshot ("gpt-4.1-2025-04-14", "claude-opus-4-1-20250805",
// "mistral-large-2411") and a Bedrock id
// ("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), and a shorthand
// ("sonnet", Resolve).
func (c Catalog) Lookup(model string) (ModelInfo, bool) {
	for _, name := range candidates(model) {
		if m, ok := c.models[name]; ok {
			return m, true
		}
	}
	if full, ok := c.Resolve(model); ok {
		m, known := c.models[normalise(full)]
		return m, known
	}
	return ModelInfo{}, false
}

// ContextWindow returns a model's context window in tokens, 0 when unknown.
func (c Catalog) ContextWindow(model string) int {
	m, _ := c.Lookup(model)
	return m.ContextWindow
}

// MaxOutput returns a model's maximum output tokens, 0 when unknown.
func (c Catalog) MaxOutput(model string) int {
	m, _ := c.Lookup(model)
	return m.MaxOutput
}

// Cost returns the USD cost of a call's usage, or nil when the model or its
// price is unknown. Cached and cache-write tokens are part of InputTokens
// and are billed at their own prices.
func (c Catalog) Cost(model string, u Usage) *float64 {
	m, ok := c.Lookup(model)
	if !ok || m.Price == nil {
		return nil
	}
	p := m.Price
	cachedRate, writeRate := p.CachedInputPerM, p.CacheWritePerM
	if cachedRate == 0 {
		cachedRate = p.InputPerM
	}
	if writeRate == 0 {
		writeRate = p.InputPerM
	}
	cached := max(min(u.CachedInputTokens, u.InputTokens), 0)
	write := max(min(u.CacheWriteTokens, u.InputTokens-cached), 0)
	fresh := max(u.InputTokens-cached-write, 0)
	cost := (float64(fresh)*p.InputPerM + float64(cached)*cachedRate +
		float64(write)*writeRate + float64(max(u.OutputTokens, 0))*p.OutputPerM) / 1e6
	return &cost
}

func normalise(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// candidates lists the names to try for a model, most specific first.
func candidates(model string) []string {
	name := normalise(model)
	out := []string{name}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
		out = append(out, name)
	}
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
		out = append(out, name)
	}
	if b, ok := bedrockModel(name); ok {
		name = b
		out = append(out, name)
	}
	for {
		trimmed, ok := trimSnapshot(name)
		if !ok {
			return out
		}
		name = trimmed
		out = append(out, name)
	}
}

// bedrockModel is a Bedrock model or inference-profile id without its
// geography ("us.", "global."), vendor ("anthropic.") and version
// ("-v1:0"): "us.anthropic.claude-sonnet-4-5-20250929-v1:0" is
// "claude-sonnet-4-5-20250929".
func bedrockModel(name string) (string, bool) {
	_, rest, ok := strings.Cut(name, "anthropic.")
	if !ok {
		return name, false
	}
	if i := strings.LastIndex(rest, "-v"); i > 0 && strings.Contains(rest[i:], ":") {
		rest = rest[:i]
	}
	return rest, true
}

// trimSnapshot removes one trailing "-latest", "-YYYY-MM-DD", "-YYYYMMDD"
// or "-NNNN" (Mistral's YYMM) from a model name.
func trimSnapshot(name string) (string, bool) {
	if s, ok := strings.CutSuffix(name, "-latest"); ok {
		return s, true
	}
	for _, pattern := range []string{"-dddd-dd-dd", "-dddddddd", "-dddd"} {
		if len(name) <= len(pattern) {
			continue
		}
		tail := name[len(name)-len(pattern):]
		if matchDigits(tail, pattern) {
			return name[:len(name)-len(pattern)], true
		}
	}
	return name, false
}

// matchDigits matches s against a pattern where 'd' is any digit and every
// other byte stands for itself.
func matchDigits(s, pattern string) bool {
	for i := range len(pattern) {
		if pattern[i] == 'd' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != pattern[i] {
			return false
		}
	}
	return true
}
