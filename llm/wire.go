package llm

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"strconv"
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
// api.anthropic.com or a Claude model with an Anthropic key, else
// responses for a model that needs it for tools (NeedsResponses), else
// chat.
func ChooseWire(named Wire, baseURL, model string, anthropicKey bool) Wire {
	if named != "" {
		return named
	}
	host := ""
	if u, err := url.Parse(baseURL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	base := modelBaseName(model)
	switch {
	case host == "api.anthropic.com":
		return WireAnthropic
	case anthropicKey && strings.HasPrefix(base, "claude") && (baseURL == "" || host == "api.openai.com"):
		return WireAnthropic
	case NeedsResponses(model) && (baseURL == "" || host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com")):
		return WireResponses
	}
	return WireChat
}

// NeedsResponses reports whether OpenAI's model calls tools well only on
// the Responses API: gpt-6 models, the *-codex models and gpt-5.4 on.
func NeedsResponses(model string) bool {
	base := modelBaseName(model)
	if strings.HasPrefix(base, "gpt-6") || strings.Contains(base, "-codex") {
		return true
	}
	rest, ok := strings.CutPrefix(base, "gpt-5.")
	if !ok {
		return false
	}
	minor, _, _ := strings.Cut(rest, "-")
	n, err := strconv.Atoi(minor)
	return err == nil && n >= 4
}

// CheckWire refuses a wire on which the model cannot call tools at all: on
// chat, gpt-6 models reject function tools at every reasoning effort and
// the *-codex models do not exist. The error says which wire to name.
func CheckWire(w Wire, model string) error {
	base := modelBaseName(model)
	if w == WireChat && (strings.HasPrefix(base, "gpt-6") || strings.Contains(base, "-codex")) {
		return fmt.Errorf("%w: model %q cannot call tools over Chat Completions (wire: chat); "+
			"use wire: responses (provider: {wire: responses} in the spec, or --wire responses)", ErrConfig, model)
	}
	return nil
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
