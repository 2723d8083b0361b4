package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestUnpricedTimeoutCostUnknown: a model with no price whose only call
// hangs until the run's timeout (no usage ever comes) has an unknown cost,
// not $0: result.json and run.finished say null, the console shows no
// dollar figure.
func TestUnpricedTimeoutCostUnknown(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	body := []byte(strings.Replace(smallSpec, "model: gpt-4.1-mini", "model: no-price-model", 1))
	if err := os.WriteFile(spec, body, 0o644); err != nil {
		t.Fatal(err)
	}
	stall := llmtest.Turn{Text: "Let me think about this for a very long time."}.Reply()
	stall.Stall, stall.StallAfter = true, 120
	srv := newModel(t, stall)
	out := t.TempDir()
	res := runRunner(t, repo, append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef"),
		"exec", spec, "--out", out, "--base-url", srv.URL(), "--timeout", "2s")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1 (timeout)\n%s", res.code, res.stderr)
	}
	fin := finished(t, readEvents(t, filepath.Join(out, "events.jsonl")))
	if fin.Status != event.StatusTimeout || fin.CostUSD != nil {
		t.Errorf("run.finished status %s, cost %s; want timeout with an unknown cost", fin.Status, data(fin.CostUSD))
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var result map[string]any
	if err := json.Unmarshal(raw, &result); err != nil {
		t.Fatal(err)
	}
	if c, ok := result["cost_usd"]; !ok || c != nil {
		t.Errorf("result.json cost_usd = %v (present %v), want null", c, ok)
	}
	if strings.Contains(res.stderr, "$0.0000") {
		t.Errorf("stderr reports a zero cost for an unpriced model:\n%s", res.stderr)
	}
}

// data is a JSON rendering of v, for messages.
func data(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
