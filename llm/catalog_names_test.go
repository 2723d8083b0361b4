package llm_test

import (
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

func TestCatalogResolveShorthand(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	for short, full := range map[string]string{"sonnet": "claude-sonnet-4-5", "Opus": "claude-opus-4-5", "haiku": "claude-haiku-4-5"} {
		got, ok := cat.Resolve(short)
		if !ok || got != full {
			t.Errorf("Resolve(%q) = %q, %v; want %q", short, got, ok, full)
		}
		if m, ok := cat.Lookup(short); !ok || m.Price == nil || m.Name != full {
			t.Errorf("Lookup(%q) = %+v, %v; want %s, priced", short, m, ok, full)
		}
	}
	for _, name := range []string{"gpt-4.1-mini", "claude-sonnet-4-5", "my-llama", ""} {
		if got, ok := cat.Resolve(name); ok || got != name {
			t.Errorf("Resolve(%q) = %q, %v; want it unchanged", name, got, ok)
		}
	}
	// A spec's own models: entry named "sonnet" (a gateway's) wins.
	own := cat.With(llm.ModelInfo{Name: "sonnet"})
	if got, ok := own.Resolve("sonnet"); ok || got != "sonnet" {
		t.Errorf("with a models: entry, Resolve(sonnet) = %q, %v; want it unchanged", got, ok)
	}
}

func TestCatalogSimilar(t *testing.T) {
	t.Parallel()
	cat := llm.DefaultCatalog()
	cases := []struct {
		model string
		first string // "" : no suggestion
	}{
		{"gpt-4.1-minii", "gpt-4.1-mini"},
		{"openai/gpt-4o-mnii", "gpt-4o-mini"},
		{"sonet", "claude-sonnet-4-5"},
		{"claude-sonet-4-5", "claude-sonnet-4-5"},
		{"gemini-2.5-pr", "gemini-2.5-pro"},
		{"llama3.1:8b", ""},
	}
	for _, c := range cases {
		got := cat.Similar(c.model)
		switch {
		case c.first == "" && len(got) != 0:
			t.Errorf("Similar(%q) = %v, want none", c.model, got)
		case c.first != "" && (len(got) == 0 || got[0] != c.first):
			t.Errorf("Similar(%q) = %v, want %s first", c.model, got, c.first)
		case len(got) > 3 || slices.Contains(got, c.model):
			t.Errorf("Similar(%q) = %v: more than three, or the name itself", c.model, got)
		}
	}
}
