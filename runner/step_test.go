package runner

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// fakeSnap records Track calls.
type fakeSnap struct {
	calls [][]string
	all   []bool
}

func (f *fakeSnap) Track(_ context.Context, touched []string, all bool) (StepSnapshot, error) {
	f.calls = append(f.calls, touched)
	f.all = append(f.all, all)
	return StepSnapshot{Tree: "tree1", Files: []event.FileChange{{Path: "a.go", Status: "modified", Additions: 2, Deletions: 1}}, Tracking: "paths"}, nil
}

func TestStepPatches(t *testing.T) {
	t.Parallel()
	write := &fakeTool{name: "write", run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		return tools.Result{Output: "wrote", Touched: []string{"a.go"}}, nil
	}}
	m := newModel(
		sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(call("c2", "write", `{}`), finish(llm.FinishToolCalls, 10, 1)),
	)
	sink := &recSink{}
	snap := &fakeSnap{}
	cfg := testConfig(m, sink, write, &fakeTool{name: "read"})
	cfg.Snapshotter = snap
	runTest(t, cfg)
	if len(snap.calls) != 1 || snap.calls[0][0] != "a.go" || snap.all[0] {
		t.Fatalf("track calls %v %v", snap.calls, snap.all)
	}
	p := sink.of("patch")
	if len(p) != 1 {
		t.Fatalf("patch events = %d", len(p))
	}
	if got := p[0].(event.Patch); *got.Step != 2 || got.Tree != "tree1" || got.Additions != 2 || got.Deletions != 1 {
		t.Errorf("patch = %+v", got)
	}
}

func TestStopRules(t *testing.T) {
	t.Parallel()
	schema, err := compileSchema(json.RawMessage(outSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		rule   stopRule
		setup  func(s *Session)
		status event.Status // "" means no stop
	}{
		{name: "denials under", rule: stopOnDenials, setup: func(s *Session) { s.denials = 4 }},
		{name: "denials at max", rule: stopOnDenials, setup: func(s *Session) { s.denials = 5 }, status: event.StatusBlocked},
		{name: "no schema", rule: stopOnOutputTries, setup: func(s *Session) { s.outputTries = 9 }},
		{name: "output tries", rule: stopOnOutputTries, setup: func(s *Session) { s.schema, s.outputTries = schema, 3 }, status: event.StatusFailed},
		{name: "no cost limit", rule: stopOnCost, setup: func(s *Session) { s.cost = 100 }},
		{name: "cost under", rule: stopOnCost, setup: func(s *Session) { s.cfg.Limits.MaxCostUSD, s.cost = 1, 0.99 }},
		{name: "cost reached", rule: stopOnCost, setup: func(s *Session) { s.cfg.Limits.MaxCostUSD, s.cost = 1, 1 }, status: event.StatusBudgetExceeded},
		{name: "no token limit", rule: stopOnTokens, setup: func(s *Session) { s.usage.InputTokens = 1e9 }},
		{name: "tokens reached", rule: stopOnTokens, setup: func(s *Session) {
			s.cfg.Limits.MaxTokens, s.usage = 100, llm.Usage{InputTokens: 60, OutputTokens: 40}
		}, status: event.StatusBudgetExceeded},
		{name: "not last step", rule: stopOnLastStep, setup: func(s *Session) { s.cfg.Limits.MaxSteps, s.step = 3, 2 }},
		{name: "last step", rule: stopOnLastStep, setup: func(s *Session) { s.cfg.Limits.MaxSteps, s.step = 3, 3 }, status: event.StatusMaxSteps},
		{name: "no step cap", rule: stopOnLastStep, setup: func(s *Session) { s.step = 1000 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := NewSession(Config{Model: newModel()})
			tc.setup(s)
			out, stopped := tc.rule(s)
			if stopped != (tc.status != "") || out.status != tc.status {
				t.Errorf("stopped=%v status=%q, want %q", stopped, out.status, tc.status)
			}
			if stopped && out.err == nil {
				t.Errorf("a stop without an error")
			}
		})
	}
}
