package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

func TestChooseWire(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	for _, tc := range []struct {
		named          llm.Wire
		baseURL, model string
		anthropicKey   bool
		want           llm.Wire
	}{
		{"", "", "gpt-4.1-mini", false, llm.WireChat},
		{"", "https://api.anthropic.com", "claude-sonnet-4-5", false, llm.WireAnthropic},
		{"", "", "claude-sonnet-4-5", true, llm.WireAnthropic},
		{"", "", "claude-sonnet-4-5-20250929", true, llm.WireAnthropic},
		{"", "", "claude-sonnet-4-5", false, llm.WireChat},
		{"", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4-5", true, llm.WireChat},
		{"", "", "gpt-6-astra", false, llm.WireResponses},
		{"", "", "gpt-5.1-codex", false, llm.WireResponses},
		{"", "", "gpt-5.4", false, llm.WireResponses},
		{"", "https://x.openai.azure.com/openai/v1", "gpt-5.4", false, llm.WireResponses},
		{"", "", "gpt-5.1", false, llm.WireChat},
		{"", "http://localhost:11434/v1", "gpt-5.4", false, llm.WireChat},
		{llm.WireChat, "", "claude-sonnet-4-5", true, llm.WireChat},
		// Not in the catalog: no name pattern guesses a wire, except that a
		// Claude model with an Anthropic key goes to Anthropic's own API.
		{"", "", "gpt-6-unlisted", false, llm.WireChat},
		{"", "", "claude-opus-9", true, llm.WireAnthropic},
		{"", "", "claude-opus-9", false, llm.WireChat},
		{"", "http://localhost:4000/v1", "claude-opus-9", true, llm.WireChat},
		{"", "https://openrouter.ai/api/v1", "anthropic/claude-opus-9", true, llm.WireChat},
	} {
		if got := cat.ChooseWire(tc.named, tc.baseURL, tc.model, tc.anthropicKey); got != tc.want {
			t.Errorf("ChooseWire(%q, %q, %q, %v) = %s, want %s", tc.named, tc.baseURL, tc.model, tc.anthropicKey, got, tc.want)
		}
	}
}

// TestChooseWireFollowsCatalogEntries checks that a model added to the
// catalog (as the spec's models: does) is routed by its wires.
func TestChooseWireFollowsCatalogEntries(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog().With(llm.ModelInfo{Name: "my-gpt", Wires: []llm.Wire{llm.WireResponses}})
	if got := cat.ChooseWire("", "", "my-gpt", false); got != llm.WireResponses {
		t.Errorf("added model: %s, want responses", got)
	}
	if err := cat.CheckWire(llm.WireChat, "my-gpt"); err == nil {
		t.Error("added responses-only model allowed on chat")
	}
	// An override of the wires alone keeps the known figures.
	cat = llm.DefaultCatalog().With(llm.ModelInfo{Name: "gpt-6-astra", Wires: []llm.Wire{llm.WireChat}})
	if err := cat.CheckWire(llm.WireChat, "gpt-6-astra"); err != nil {
		t.Errorf("overridden to chat: %v", err)
	}
	if got := cat.ChooseWire("", "", "gpt-6-astra", false); got != llm.WireChat {
		t.Errorf("overridden to chat: chose %s", got)
	}
	sonnet := llm.DefaultCatalog().With(llm.ModelInfo{Name: "claude-sonnet-4-5", Wires: []llm.Wire{llm.WireChat}})
	if m, _ := sonnet.Lookup("claude-sonnet-4-5"); m.Price == nil || m.ContextWindow == 0 {
		t.Errorf("wires override lost the figures: %+v", m)
	}
}

func TestCheckWireRefusesChatForResponsesOnlyModels(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	for _, m := range []string{"gpt-6-astra", "openai/gpt-5.1-codex"} {
		err := cat.CheckWire(llm.WireChat, m)
		if !errors.Is(err, llm.ErrConfig) || !strings.Contains(err.Error(), "use wire: responses") ||
			!strings.Contains(err.Error(), "wires: [chat]") {
			t.Errorf("CheckWire(chat, %s) = %v", m, err)
		}
		if err := cat.CheckWire(llm.WireResponses, m); err != nil {
			t.Errorf("CheckWire(responses, %s) = %v", m, err)
		}
	}
	if err := cat.CheckWire(llm.WireChat, "gpt-5.4"); err != nil {
		t.Errorf("gpt-5.4 on chat (tools with reasoning_effort none): %v", err)
	}
	if err := cat.CheckWire(llm.WireResponses, "claude-sonnet-4-5"); err == nil {
		t.Error("claude on responses allowed")
	}
	if err := cat.CheckWire(llm.WireAnthropic, "my-local-model"); err != nil {
		t.Errorf("a model the catalog does not know is refused: %v", err)
	}
}

// TestCheckBaseURL: a base URL ending in a wire's endpoint path is refused
// with the URL to use; any other passes.
func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ base, fixed string }{
		{"http://127.0.0.1:18080/v1/chat/completions", "http://127.0.0.1:18080/v1"},
		{"https://api.openai.com/v1/responses/", "https://api.openai.com/v1"},
		{"https://api.anthropic.com/v1/messages", "https://api.anthropic.com/v1"},
		{"https://gw.example/v1/chat/completions?api-version=1", "https://gw.example/v1?api-version=1"},
		{"https://api.openai.com/v1", ""},
		{"http://localhost:11434/v1", ""},
		{"https://gw.example/messages-proxy/v1", ""},
	} {
		err := llm.CheckBaseURL(tc.base)
		switch {
		case tc.fixed == "" && err != nil:
			t.Errorf("CheckBaseURL(%q) = %v, want nil", tc.base, err)
		case tc.fixed != "" && (err == nil || !strings.Contains(err.Error(), "drop that suffix and use "+tc.fixed)):
			t.Errorf("CheckBaseURL(%q) = %v, want the fix %s", tc.base, err, tc.fixed)
		}
	}
}
