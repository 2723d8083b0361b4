package llm

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"
)

// Wire names the API a run talks to the model over.
type Wire string

// Wires.
const (
	// WireChat is OpenAI's Chat Completions and every compatible endpoint.
	WireChat Wire = "chat"
	// WireResponses is OpenAI's Responses API, stateless (store: false).
	WireResponses Wire = "responses"
	// WireAnthropic is Anthropic's Messages API.
	WireAnthropic Wire = "anthropic"
)

// WireNames lists the wires a spec or flag may name.
func WireNames() []string {
	return []string{string(WireAnthropic), string(WireChat), string(WireResponses)}
}

// ChooseWire picks a run's wire: the one named, else anthropic for
// api.anthropic.com, else the model's first catalog wire (ModelInfo.Wires)
// where the endpoint is that vendor's own, else chat. A Claude model the
// catalog does not list counts as listed for anthropic.
//   - anthropic: with an Anthropic key and no other endpoint than OpenAI's
//     default.
//   - responses: at OpenAI or Azure OpenAI.
func (c Catalog) ChooseWire(named Wire, baseURL, model string, anthropicKey bool) Wire {
	if named != "" {
		return named
	}
	host := ""
	if u, err := url.Parse(baseURL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	if host == "api.anthropic.com" {
		return WireAnthropic
	}
	m, ok := c.Lookup(model)
	if !ok && isClaude(model) {
		// A Claude model newer than the catalog still needs Anthropic's
		// own API for caching and thinking.
		m.Wires = []Wire{WireAnthropic}
	}
	if len(m.Wires) == 0 {
		return WireChat
	}
	switch m.Wires[0] {
	case WireAnthropic:
		if anthropicKey && (baseURL == "" || host == "api.openai.com") {
			return WireAnthropic
		}
	case WireResponses:
		if baseURL == "" || host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com") {
			return WireResponses
		}
	}
	return WireChat
}

// NativeWire is the first wire the catalog lists for model, anthropic for
// a Claude model it does not list, else "".
func (c Catalog) NativeWire(model string) Wire {
	if m, ok := c.Lookup(model); ok && len(m.Wires) > 0 {
		return m.Wires[0]
	}
	if isClaude(model) {
		return WireAnthropic
	}
	return ""
}

// CheckWire refuses a wire on which the catalog says the model cannot call
// tools (chat for gpt-6-astra). The error names the wires that work and the
// spec key that overrides the catalog.
func (c Catalog) CheckWire(w Wire, model string) error {
	m, ok := c.Lookup(model)
	if !ok || len(m.Wires) == 0 || slices.Contains(m.Wires, w) {
		return nil
	}
	names := make([]string, len(m.Wires))
	for i, x := range m.Wires {
		names[i] = string(x)
	}
	return fmt.Errorf("%w: model %q cannot call tools over wire %s by the model catalog; "+
		"use wire: %s (provider: {wire: %s} in the spec, or --wire %s), "+
		"or, if your endpoint serves it there, add the wire under models: {%q: {wires: [%s]}}",
		ErrConfig, model, w, strings.Join(names, " or "), m.Wires[0], m.Wires[0], model, w)
}

// modelBaseName is a model name lower-cased, without a vendor/ prefix.
func modelBaseName(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	return m[strings.LastIndex(m, "/")+1:]
}

// Streamer is a provider of any wire: Provider and NativeProvider.
type Streamer interface {
	Stream(ctx context.Context, req Request) iter.Seq[Event]
}

// NewWire returns the provider of a wire; WireChat (or "") is New(cfg).
func NewWire(w Wire, cfg Config) (Streamer, error) {
	switch w {
	case WireAnthropic:
		return NewAnthropic(cfg)
	case WireResponses:
		return NewResponses(cfg)
	case WireChat, "":
		return New(cfg)
	}
	return nil, fmt.Errorf("%w: unknown wire %q (one of %s)", ErrConfig, w, strings.Join(WireNames(), ", "))
}

// isClaude reports whether a model id names an Anthropic Claude model,
// with or without a router's "vendor/" prefix.
func isClaude(model string) bool {
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return strings.HasPrefix(name, "claude-")
}
