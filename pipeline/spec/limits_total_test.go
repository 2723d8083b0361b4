package spec

import (
	"strings"
	"testing"
)

func TestLimitsTotal(t *testing.T) {
	const head = "version: 1\nname: t\nprompt: p\nlimits:\n  max_steps: 5\n"
	s, err := LoadBytes("t.yaml", []byte(head+"  total: {max_steps: 20, max_cost_usd: 3.5, max_tokens: 100000}\ngithub: {continue: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Limits.Total; got != (TotalLimits{MaxSteps: 20, MaxCostUSD: 3.5, MaxTokens: 100000}) || !got.Any() || !s.GitHub.Continue {
		t.Errorf("total %+v, continue %v", got, s.GitHub.Continue)
	}
	for bad, want := range map[string]string{
		"  total: {max_step: 3}\n":  "t.yaml:6:11: unknown key \"max_step\" in limits.total",
		"  total: {max_steps: 0}\n": "limits.total.max_steps",
		"  total: 3\n":              "limits.total",
	} {
		_, err := LoadBytes("t.yaml", []byte(head+bad))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", bad, err, want)
		}
	}
}
