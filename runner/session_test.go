package runner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

const outSchema = `{"type":"object","properties":{"fixed":{"type":"boolean"},"files":{"type":"array","items":{"type":"string"}}},"required":["fixed"],"additionalProperties":false}`

func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	so := func(id, args string) script {
		return sc(call(id, StructuredOutputTool, args), finish(llm.FinishToolCalls, 10, 1))
	}
	for _, tc := range []struct {
		name    string
		scripts []script
		status  event.Status
		output  string
		steps   int
	}{
		{name: "valid", scripts: []script{so("c1", `{"fixed":true,"files":["a.go"]}`)},
			status: event.StatusSuccess, output: `{"fixed":true,"files":["a.go"]}`, steps: 1},
		{name: "invalid then valid", scripts: []script{so("c1", `{"fixed":"yes"}`), so("c2", `{"fixed":false}`)},
			status: event.StatusSuccess, output: `{"fixed":false}`, steps: 2},
		{name: "invalid three times", scripts: []script{so("c1", `{"fixed":"yes"}`), so("c2", `{"fixed":1`),
			so("c3", `{"other":1}`), so("c4", `{"fixed":true}`)}, status: event.StatusFailed, steps: 3},
		{name: "text instead of the tool", scripts: []script{sc(text("done!"), finish(llm.FinishStop, 10, 1)),
			so("c1", `{"fixed":true}`)}, status: event.StatusSuccess, output: `{"fixed":true}`, steps: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newModel(tc.scripts...)
			cfg := testConfig(m, &recSink{}, &fakeTool{name: "read"})
			cfg.OutputSchema = json.RawMessage(outSchema)
			res := runTest(t, cfg)
			if res.Status != tc.status || string(res.StructuredOutput) != tc.output || res.Steps != tc.steps {
				t.Fatalf("result %+v (output %s)", res, res.StructuredOutput)
			}
			req := m.reqs()[0]
			if req.ToolChoice != llm.ToolChoiceRequired || req.Tools[0].Name != StructuredOutputTool ||
				string(req.Tools[0].Parameters) != outSchema {
				t.Errorf("request tools %+v choice %q", req.Tools, req.ToolChoice)
			}
			if tc.steps > 1 {
				msgs := m.reqs()[1].Messages
				if last := msgs[len(msgs)-1].Content; !strings.Contains(last, "StructuredOutput") {
					t.Errorf("the model was not told why: %q", last)
				}
			}
		})
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	cfg := testConfig(newModel(), nil)
	cfg.OutputSchema = json.RawMessage(`{"type": 12}`)
	if _, err := Run(t.Context(), cfg); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("err = %v, want ErrBadSchema", err)
	}
	if _, err := Run(t.Context(), Config{Prompt: "x"}); !errors.Is(err, ErrNoModel) {
		t.Fatalf("err = %v, want ErrNoModel", err)
	}
	if _, err := Run(t.Context(), Config{Model: newModel()}); !errors.Is(err, ErrNoPrompt) {
		t.Fatalf("err = %v, want ErrNoPrompt", err)
	}
	dup := testConfig(newModel(), nil, &fakeTool{name: "read"}, &fakeTool{name: "read"})
	if _, err := Run(t.Context(), dup); !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("err = %v, want ErrDuplicateTool", err)
	}
	reserved := testConfig(newModel(), nil, &fakeTool{name: StructuredOutputTool})
	reserved.OutputSchema = json.RawMessage(outSchema)
	if _, err := Run(t.Context(), reserved); !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("err = %v, want ErrDuplicateTool", err)
	}
}

func TestCompaction(t *testing.T) {
	t.Parallel()
	summary := sc(text("SUMMARY: read a.go, bug on line 3"), finish(llm.FinishStop, 50, 20))
	t.Run("overflow error", func(t *testing.T) {
		t.Parallel()
		m := newModel(sc(fail(llm.ClassContextOverflow, 0)), summary, sc(text("fixed"), finish(llm.FinishStop, 10, 1)))
		sink := &recSink{}
		res := runTest(t, testConfig(m, sink))
		if res.Status != event.StatusSuccess || res.Compactions != 1 || res.Steps != 1 || res.Tokens.Input != 60 {
			t.Fatalf("result %+v", res)
		}
		want := []string{"step.started", "compaction", "text", "step.finished"}
		if diff := cmp.Diff(want, sink.types()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		c := sink.of("compaction")[0].(event.Compaction)
		if c.Reason != "overflow" || c.Step != 1 {
			t.Errorf("compaction = %+v", c)
		}
		reqs := m.reqs()
		if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Content != compactionPrompt {
			t.Errorf("summary request ends with %q", last.Content)
		}
		after := reqs[2].Messages
		if len(after) != 2 || !strings.HasPrefix(after[1].Content, "Fix the bug.") ||
			!strings.Contains(after[1].Content, "SUMMARY: read a.go") {
			t.Errorf("history after compaction = %+v", after)
		}
	})
	t.Run("usage near the window", func(t *testing.T) {
		t.Parallel()
		m := newModel(
			sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 900, 50)),
			summary,
			sc(text("fixed"), finish(llm.FinishStop, 10, 1)),
		)
		sink := &recSink{}
		cfg := testConfig(m, sink, &fakeTool{name: "read"})
		cfg.Windows = fixedPricer{window: 1000}
		res := runTest(t, cfg)
		if res.Status != event.StatusSuccess || res.Compactions != 1 || res.Steps != 2 {
			t.Fatalf("result %+v", res)
		}
		c := sink.of("compaction")[0].(event.Compaction)
		if c.Reason != "usage" || c.Step != 2 || c.TokensBefore != 950 {
			t.Errorf("compaction = %+v", c)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		var scripts []script
		for range 3 {
			scripts = append(scripts, sc(fail(llm.ClassContextOverflow, 0)), summary)
		}
		cfg := testConfig(newModel(scripts...), &recSink{})
		cfg.MaxCompactions = 2
		res := runTest(t, cfg)
		if res.Status != event.StatusError || res.Compactions != 2 || res.RunError().Class != "context-overflow" {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	read := &fakeTool{name: "read", run: func(context.Context, tools.Call) (tools.Result, error) {
		close(ran)
		return tools.Result{Output: "ok"}, nil
	}}
	m := newModel(script{fn: func(ctx context.Context, yield func(llm.Event) bool) {
		for _, ev := range reply(call("c1", "read", `{}`), []llm.Event{{Type: llm.EventTextStart, ID: "t"},
			{Type: llm.EventTextDelta, ID: "t", Delta: "working on"}}) {
			yield(ev)
		}
		<-ran // the stream is read ahead: cancel once the call has run
		cancel()
		<-ctx.Done()
		yield(llm.Event{Type: llm.EventError, Err: &llm.Error{Class: llm.ClassFatal, Err: ctx.Err()}})
	}})
	sink := &recSink{}
	res, err := Run(ctx, testConfig(m, sink, read))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != event.StatusCancelled || res.RunError().Class != event.ClassCancelled || res.Steps != 1 {
		t.Fatalf("result %+v", res)
	}
	want := []string{"step.started", "tool.started", "tool.completed", "step.finished"}
	if diff := cmp.Diff(want, sink.types()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	m := newModel(script{fn: func(ctx context.Context, yield func(llm.Event) bool) {
		<-ctx.Done()
	}})
	cfg := testConfig(m, &recSink{})
	cfg.Now = time.Now
	cfg.Limits.Timeout = 20 * time.Millisecond
	res := runTest(t, cfg)
	if res.Status != event.StatusTimeout {
		t.Fatalf("result %+v", res)
	}
	if e := res.RunError(); e == nil || e.Class != event.ClassTimeout || e.Message != "the run's timeout (20ms) was reached" {
		t.Errorf("run error %+v, want the timeout named with its value", e)
	}
}

func TestContinueAccumulates(t *testing.T) {
	t.Parallel()
	m := newModel(
		sc(call("c1", "edit", `{}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(text("done"), finish(llm.FinishStop, 20, 2)),
		sc(call("c2", "edit", `{"path":"b"}`), finish(llm.FinishToolCalls, 30, 3)),
		sc(text("fixed for real"), finish(llm.FinishStop, 40, 4)),
	)
	cfg := testConfig(m, &recSink{}, &fakeTool{name: "edit"})
	cfg.Pricer = fixedPricer{perCall: ptr(0.25)}
	s := NewSession(cfg)
	if _, err := s.Continue(t.Context(), "x"); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("continue before run: %v", err)
	}
	if _, err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(t.Context()); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second run: %v", err)
	}
	res, err := s.Continue(t.Context(), "check tests failed:\nFAIL a_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != event.StatusSuccess || res.Steps != 4 || res.FinalMessage != "fixed for real" ||
		res.Tokens.Input != 100 || *res.CostUSD != 1.0 {
		t.Fatalf("result %+v", res)
	}
	reqs := m.reqs()
	assertAppendOnly(t, reqs)
	if got := reqs[2].Messages[len(reqs[2].Messages)-1]; got.Role != llm.RoleUser || !strings.Contains(got.Content, "FAIL") {
		t.Errorf("check output not fed back: %+v", got)
	}
}

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
