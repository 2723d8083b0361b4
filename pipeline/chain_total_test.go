package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// totalSpec is runSpec with a step cap of 5 per run and total limits.
func totalSpec(t *testing.T, total string) (spec, repo string) {
	t.Helper()
	spec, repo = execFixture(t)
	mustWrite(t, spec, strings.Replace(runSpec, "  max_steps: 2\n", "  max_steps: 5\n  total: {"+total+"}\n", 1))
	return spec, repo
}

func startedLimits(t *testing.T, out string) event.Limits {
	t.Helper()
	var rs event.RunStarted
	if err := firstRecord(t, out, "run.started").Decode(&rs); err != nil {
		t.Fatal(err)
	}
	return rs.Limits
}

// TestContinueTotalSteps: limits.total.max_steps bounds the chain. Run 1
// takes 2 steps; run 2 continues with 1 step left and stops max_steps,
// the message naming the total; run.started records the per-run limit,
// the total and what was spent. Run 3 finds nothing left: no model call,
// status max_steps.
func TestContinueTotalSteps(t *testing.T) {
	spec, repo := totalSpec(t, "max_steps: 3")
	r1, r2, r3 := filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r2"), filepath.Join(t.TempDir(), "r3")
	res, err := continueRun(t, spec, repo, r1, "", "", false, newModel(t, writeFileTurn("a.txt", "a\n"), llmtest.Turn{Text: "Wrote a."}.Reply()))
	if err != nil || res.Status != event.StatusSuccess || res.Steps != 2 {
		t.Fatalf("run 1: %v %+v", err, res)
	}
	if l := startedLimits(t, r1); l.MaxSteps != 5 || l.Total == nil || l.Total.MaxSteps != 3 || l.Total.Spent.Runs != 0 {
		t.Errorf("run 1 limits %+v total %+v", l, l.Total)
	}
	s2 := newModel(t, writeFileTurn("b.txt", "b\n"))
	res, _ = continueRun(t, spec, repo, r2, r1, "Also write b.", false, s2)
	if res.Status != event.StatusMaxSteps || res.Steps != 1 || res.Error == nil ||
		!strings.Contains(res.Error.Message, "reached limits.total.max_steps (3): 2 steps in the earlier run, 1 in this one") {
		t.Fatalf("run 2: %+v %+v", res, res.Error)
	}
	l := startedLimits(t, r2)
	if l.MaxSteps != 5 || l.Total == nil || l.Total.MaxSteps != 3 || l.Total.Spent.Runs != 1 || l.Total.Spent.Steps != 2 ||
		l.Total.Spent.Tokens == 0 || l.Total.Spent.CostUSD == nil {
		t.Errorf("run 2 run.started limits %+v total %+v", l, l.Total)
	}
	s3 := newModel(t)
	res, _ = continueRun(t, spec, repo, r3, r2, "And c.", false, s3)
	if res.Status != event.StatusMaxSteps || res.Steps != 0 || res.Error == nil ||
		!strings.Contains(res.Error.Message, "the 2 earlier runs took 3 steps, limits.total.max_steps is 3") {
		t.Fatalf("run 3: %+v %+v", res, res.Error)
	}
	if n := len(s3.Requests()); n != 0 {
		t.Errorf("run 3 made %d model calls with nothing left", n)
	}
	if l := startedLimits(t, r3); l.Total.Spent.Runs != 2 || l.Total.Spent.Steps != 3 {
		t.Errorf("run 3 spent %+v, want 2 runs and 3 steps", l.Total.Spent)
	}
	// Run 3's history is still the conversation: a run 4 continues it and
	// finds the total used up too (no way around it through run 3).
	s4 := newModel(t)
	res, err = continueRun(t, spec, repo, filepath.Join(t.TempDir(), "r4"), r3, "And d.", false, s4)
	if res.Status != event.StatusMaxSteps || len(s4.Requests()) != 0 || res.Error == nil ||
		!strings.Contains(res.Error.Message, "3 earlier runs took 3 steps") {
		t.Errorf("run 4: %v %+v %+v", err, res, res.Error)
	}
}

// TestContinueTotalTokens: limits.total.max_tokens counts the earlier
// runs' tokens; the continued run stops budget_exceeded once the sum
// reaches it, though its own tokens are far under it.
func TestContinueTotalTokens(t *testing.T) {
	spec, repo := totalSpec(t, "max_tokens: 300")
	r1, r2 := filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r2")
	res, err := continueRun(t, spec, repo, r1, "", "", false, newModel(t, writeFileTurn("a.txt", "a\n"), llmtest.Turn{Text: "Wrote a."}.Reply()))
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("run 1: %v %+v", err, res)
	}
	used := res.Tokens.Input + res.Tokens.Output
	if used >= 300 || used+100 < 300 {
		t.Fatalf("run 1 used %d tokens; the test wants 200..299", used)
	}
	res, _ = continueRun(t, spec, repo, r2, r1, "Also write b.", false,
		newModel(t, writeFileTurn("b.txt", "b\n"), llmtest.Turn{Text: "Wrote b."}.Reply()))
	if res.Status != event.StatusBudgetExceeded || res.Steps != 1 || res.Error == nil ||
		!strings.Contains(res.Error.Message, "reached limits.total.max_tokens (300)") {
		t.Fatalf("run 2: %+v %+v", res, res.Error)
	}
	if l := startedLimits(t, r2); l.MaxTokens != 0 || l.Total.MaxTokens != 300 || l.Total.Spent.Tokens != used {
		t.Errorf("run 2 limits %+v total %+v, want spent %d", l, l.Total, used)
	}
	// The chain is kept in the history header, so it survives the earlier
	// out dirs.
	data, err := os.ReadFile(filepath.Join(r2, "history.jsonl"))
	if err != nil || !strings.Contains(strings.SplitN(string(data), "\n", 2)[0], `"chain":[{"run_id"`) {
		t.Errorf("history header without the chain: %.300s (%v)", data, err)
	}
}
