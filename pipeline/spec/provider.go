package spec

import (
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/llm"
	"gopkg.in/yaml.v3"
)

// Provider adapts requests to the model provider ("provider"). Left out,
// the runner chooses a request profile from the base URL and the model
// name (llm.ProfileFor); these keys name one instead or change single
// traits of it (for an endpoint whose URL says nothing, such as a LiteLLM
// proxy in front of Claude).
type Provider struct {
	// Wire is the API spoken ("wire"): "chat", "responses" or "anthropic";
	// "" chooses from the endpoint and the model (llm.ChooseWire).
	Wire string
	// Platform is where the anthropic wire reaches Claude ("platform"):
	// "anthropic" (or ""), "bedrock" or "vertex".
	Platform string
	// Region is the AWS region or Vertex location ("region"); "" takes
	// AWS_REGION (bedrock) or CLOUD_ML_REGION (vertex).
	Region string
	// Project is the Google Cloud project ("project", vertex); "" takes
	// the credentials' project or ANTHROPIC_VERTEX_PROJECT_ID.
	Project string
	// Profile names a built-in profile ("profile"): one of
	// llm.ProfileNames(), "none" to send requests unadapted, "" to choose
	// from the base URL and the model.
	Profile string
	// ToolCallIDs is "mistral", "anthropic" or "keep" ("tool_call_ids"); ""
	// leaves the profile's.
	ToolCallIDs string
	// NoUserAfterTool, NoEmptyContent, CacheControl and ReasoningObject set
	// the profile traits of those names ("no_user_after_tool",
	// "no_empty_content", "cache_control", "reasoning_object"); nil leaves
	// the profile's.
	NoUserAfterTool, NoEmptyContent, CacheControl, ReasoningObject *bool
	// Schema is "gemini" or "none" ("schema"); "" leaves the profile's.
	Schema string
	// Store: false sends store: false, true leaves it out ("store"); nil
	// leaves the profile's.
	Store *bool
}

// oneOf decodes a non-empty string that must be one of allowed.
func (d *Decoder) oneOf(path string, n *yaml.Node, allowed []string) string {
	v := d.NonEmpty(path, n)
	if v != "" && !slices.Contains(allowed, v) {
		d.ErrorAt(n, "one of: "+strings.Join(allowed, ", "), "%s: unknown value %q", path, v)
	}
	return v
}

// provider decodes "provider".
func (d *Decoder) provider(path string, n *yaml.Node) Provider {
	var p Provider
	boolPtr := func(p string, n *yaml.Node) *bool { v := d.Boolean(p, n); return &v }
	oneOf := d.oneOf
	d.Mapping(path, n, FieldFuncs{
		"wire":               func(q string, n *yaml.Node) { p.Wire = oneOf(q, n, llm.WireNames()) },
		"platform":           func(q string, n *yaml.Node) { p.Platform = oneOf(q, n, llm.PlatformNames()) },
		"region":             func(q string, n *yaml.Node) { p.Region = d.NonEmpty(q, n) },
		"project":            func(q string, n *yaml.Node) { p.Project = d.NonEmpty(q, n) },
		"profile":            func(q string, n *yaml.Node) { p.Profile = oneOf(q, n, llm.ProfileNames()) },
		"tool_call_ids":      func(q string, n *yaml.Node) { p.ToolCallIDs = oneOf(q, n, []string{"mistral", "anthropic", "keep"}) },
		"no_user_after_tool": func(q string, n *yaml.Node) { p.NoUserAfterTool = boolPtr(q, n) },
		"no_empty_content":   func(q string, n *yaml.Node) { p.NoEmptyContent = boolPtr(q, n) },
		"schema":             func(q string, n *yaml.Node) { p.Schema = oneOf(q, n, []string{"gemini", "none"}) },
		"cache_control":      func(q string, n *yaml.Node) { p.CacheControl = boolPtr(q, n) },
		"store":              func(q string, n *yaml.Node) { p.Store = boolPtr(q, n) },
		"reasoning_object":   func(q string, n *yaml.Node) { p.ReasoningObject = boolPtr(q, n) },
	})
	cloud := p.Platform == string(llm.PlatformBedrock) || p.Platform == string(llm.PlatformVertex)
	switch {
	case cloud && p.Wire != "" && p.Wire != string(llm.WireAnthropic):
		d.ErrorAt(n, "set wire: anthropic, or leave wire out", "%s: platform %s serves Claude over the anthropic wire, not wire %s", path, p.Platform, p.Wire)
	case !cloud && (p.Region != "" || p.Project != ""):
		d.ErrorAt(n, "set platform: bedrock or platform: vertex", "%s: region and project apply to a cloud platform only", path)
	case p.Platform == string(llm.PlatformBedrock) && p.Project != "":
		d.ErrorAt(n, "remove project (bedrock takes the region alone)", "%s: project applies to platform vertex only", path)
	}
	return p
}

// RequestProfile returns the request profile for a base URL and a model:
// nil when the section is left out (the provider then chooses per request),
// else the named profile (or the one chosen from baseURL and model) with the
// section's traits applied.
func (p Provider) RequestProfile(baseURL, model string) *llm.Profile {
	p.Wire, p.Platform, p.Region, p.Project = "", "", "", "" // no request traits
	if p == (Provider{}) {
		return nil
	}
	prof := llm.ProfileFor(baseURL, model)
	if p.Profile != "" {
		prof, _ = llm.NamedProfile(p.Profile) // validated by Load
	}
	switch p.ToolCallIDs {
	case "keep":
		prof.ToolCallIDs = ""
	case "mistral", "anthropic":
		prof.ToolCallIDs = llm.IDFormat(p.ToolCallIDs)
	}
	switch p.Schema {
	case "none":
		prof.Schema = ""
	case "gemini":
		prof.Schema = llm.SchemaGemini
	}
	for _, b := range []struct {
		set *bool
		to  *bool
	}{{p.NoUserAfterTool, &prof.NoUserAfterTool}, {p.NoEmptyContent, &prof.NoEmptyContent},
		{p.CacheControl, &prof.CacheControl}, {p.ReasoningObject, &prof.ReasoningObject}} {
		if b.set != nil {
			*b.to = *b.set
		}
	}
	if p.Store != nil {
		prof.StoreFalse = !*p.Store
	}
	return &prof
}
