package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

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

func TestCancelWithAProviderThatIgnoresIt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	edit := &fakeTool{name: "edit"}
	m := newModel(script{fn: func(_ context.Context, yield func(llm.Event) bool) {
		cancel()
		for _, ev := range reply(call("c1", "edit", `{}`), finish(llm.FinishToolCalls, 1, 1)) {
			if !yield(ev) {
				return
			}
		}
	}})
	res, err := Run(ctx, testConfig(m, &recSink{}, edit))
	if err != nil || res.Status != event.StatusCancelled || edit.count() != 0 {
		t.Fatalf("err %v, edit ran %d times, result %+v", err, edit.count(), res)
	}
}
