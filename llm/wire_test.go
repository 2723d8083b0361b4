package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

func TestChooseWire(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		named          llm.Wire
		baseURL, model string
		anthropicKey   bool
		want           llm.Wire
	}{
		{"", "", "gpt-4.1-mini", false, llm.WireChat},
		{"", "https://api.anthropic.com", "claude-sonnet-4-5", false, llm.WireAnthropic},
		{"", "", "claude-sonnet-4-5", true, llm.WireAnthropic},
		{"", "", "claude-sonnet-4-5", false, llm.WireChat},
		{"", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4-5", true, llm.WireChat},
		{"", "", "gpt-6-astra", false, llm.WireResponses},
		{"", "", "gpt-5.1-codex", false, llm.WireResponses},
		{"", "", "gpt-5.4", false, llm.WireResponses},
		{"", "", "gpt-5.1", false, llm.WireChat},
		{"", "http://localhost:11434/v1", "gpt-5.4", false, llm.WireChat},
		{llm.WireChat, "", "claude-sonnet-4-5", true, llm.WireChat},
	} {
		if got := llm.ChooseWire(tc.named, tc.baseURL, tc.model, tc.anthropicKey); got != tc.want {
			t.Errorf("ChooseWire(%q, %q, %q, %v) = %s, want %s", tc.named, tc.baseURL, tc.model, tc.anthropicKey, got, tc.want)
		}
	}
}

func TestCheckWireRefusesChatForResponsesOnlyModels(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"gpt-6-astra", "openai/gpt-5.1-codex"} {
		err := llm.CheckWire(llm.WireChat, m)
		if !errors.Is(err, llm.ErrConfig) || !strings.Contains(err.Error(), "wire: responses") {
			t.Errorf("CheckWire(chat, %s) = %v", m, err)
		}
		if err := llm.CheckWire(llm.WireResponses, m); err != nil {
			t.Errorf("CheckWire(responses, %s) = %v", m, err)
		}
	}
	if err := llm.CheckWire(llm.WireChat, "gpt-5.4"); err != nil {
		t.Errorf("gpt-5.4 on chat (tools with reasoning_effort none): %v", err)
	}
}
