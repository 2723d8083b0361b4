package llm_test

import (
	"math"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

func TestCatalogLookup(t *testing.T) {
	t.Parallel()
	c := llm.DefaultCatalog()
	tests := []struct{ model, want string }{
		{"gpt-4.1-mini", "gpt-4.1-mini"},
		{"openai/gpt-4.1-mini", "gpt-4.1-mini"},
		{"GPT-4o", "gpt-4o"},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"gpt-4.1-2025-04-14", "gpt-4.1"},
		{"anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-4@20250514", "claude-sonnet-4"},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"},
		{"google/gemini-2.5-flash", "gemini-2.5-flash"},
		{"deepseek/deepseek-reasoner", "deepseek-reasoner"},
		{"mistral-large-latest", "mistral-large"},
		{"mistral-small-2506", "mistral-small"},
		{"codestral-latest", "codestral"},
		{"o3", "o3"},
		{"gpt-5-codex", "gpt-5-codex"},
		{"gpt-5.4-2026-03-05", "gpt-5.4"},
		{"llama3.1:8b", ""},
		{"gpt-4.1-turbo", ""},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.model)
		if got := map[bool]string{true: m.Name}[ok]; got != tt.want {
			t.Errorf("Lookup(%q) = %q, want %q", tt.model, got, tt.want)
		}
	}
	if c.ContextWindow("openrouter/anthropic/claude-sonnet-4.5") != 200_000 || c.ContextWindow("nope") != 0 ||
		c.MaxOutput("o3") != 100_000 {
		t.Errorf("ContextWindow/MaxOutput lookups wrong")
	}
	// Every entry has its figures, or none and only its wires.
	for _, m := range c.Models() {
		wiresOnly := m.ContextWindow == 0 && m.MaxOutput == 0 && m.Price == nil && len(m.Wires) > 0
		if !wiresOnly && (m.ContextWindow == 0 || m.Price == nil || m.Price.InputPerM <= 0 || m.Price.OutputPerM <= 0) {
			t.Errorf("%s: incomplete figures %+v", m.Name, m)
		}
	}
}

func TestCatalogCost(t *testing.T) {
	t.Parallel()
	c := llm.DefaultCatalog().With(
		llm.ModelInfo{Name: "local-qwen", ContextWindow: 32768, Price: &llm.Price{}},
		llm.ModelInfo{Name: "gpt-4.1-mini", Price: &llm.Price{InputPerM: 1, OutputPerM: 2}},
		llm.ModelInfo{Name: "mystery"},
	)
	tests := []struct {
		model string
		u     llm.Usage
		want  *float64
	}{
		// 1M fresh input at $2 + 1M output at $8.
		{"gpt-4.1", llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, ptr(10.0)},
		// 600k fresh at $3, 400k cache read at $0.30, 100k output at $15.
		{"claude-sonnet-4-5", llm.Usage{InputTokens: 1_000_000, CachedInputTokens: 400_000, OutputTokens: 100_000}, ptr(1.8 + 0.12 + 1.5)},
		// cache writes at $3.75.
		{"claude-sonnet-4-5", llm.Usage{InputTokens: 1_000_000, CacheWriteTokens: 1_000_000}, ptr(3.75)},
		// Mistral: no cache discount.
		{"mistral-small", llm.Usage{InputTokens: 1_000_000, CachedInputTokens: 1_000_000}, ptr(0.10)},
		{"local-qwen", llm.Usage{InputTokens: 5000, OutputTokens: 5000}, ptr(0.0)},
		{"gpt-4.1-mini", llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, ptr(3.0)},
		{"mystery", llm.Usage{InputTokens: 10}, nil},
		{"unknown-model", llm.Usage{InputTokens: 10}, nil},
	}
	for _, tt := range tests {
		got := c.Cost(tt.model, tt.u)
		switch {
		case tt.want == nil && got != nil:
			t.Errorf("Cost(%s) = %v, want nil (unknown)", tt.model, *got)
		case tt.want != nil && (got == nil || math.Abs(*got-*tt.want) > 1e-9):
			t.Errorf("Cost(%s) = %v, want %v", tt.model, got, *tt.want)
		}
	}
	// The override kept the known window; the default catalog is untouched.
	if m, _ := c.Lookup("gpt-4.1-mini"); m.ContextWindow != 1_047_576 {
		t.Errorf("override lost the context window: %+v", m)
	}
	if p := llm.DefaultCatalog().Cost("gpt-4.1-mini", llm.Usage{InputTokens: 1_000_000}); p == nil || *p != 0.40 {
		t.Errorf("default catalog changed by With: %v", p)
	}
}
