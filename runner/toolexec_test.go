package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

func TestUnfinishedToolCallIsAborted(t *testing.T) {
	t.Parallel()
	cut := []llm.Event{
		{Type: llm.EventToolInputStart, ID: "c1", ToolName: "read"},
		{Type: llm.EventToolInputDelta, ID: "c1", ToolName: "read", Delta: `{"pa`},
	}
	read := &fakeTool{name: "read"}
	m := newModel(sc(cut, finish(llm.FinishToolCalls, 10, 1)), sc(text("ok"), finish(llm.FinishStop, 10, 1)))
	res := runTest(t, testConfig(m, &recSink{}, read))
	if res.Status != event.StatusSuccess || read.count() != 0 {
		t.Fatalf("read ran %d times; result %+v", read.count(), res)
	}
	msgs := m.reqs()[1].Messages
	call, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if len(call.ToolCalls) != 1 || !call.ToolCalls[0].ArgumentsInvalid || call.ToolCalls[0].ArgumentsRaw != `{"pa` {
		t.Errorf("aborted call = %+v", call.ToolCalls)
	}
	if result.Content != "Error: "+abortedMessage {
		t.Errorf("aborted result = %q", result.Content)
	}
}

func TestRetryAfterToolsRanKeepsThem(t *testing.T) {
	t.Parallel()
	edit := &fakeTool{name: "edit", run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Output: "edited", Touched: []string{"a.go"}}, nil
	}}
	m := newModel(
		sc(call("c1", "edit", `{}`), text("and now"), fail(llm.ClassRetryable, 0)),
		sc(text("done"), finish(llm.FinishStop, 10, 1)),
	)
	sink := &recSink{}
	cfg := testConfig(m, sink, edit)
	cfg.Snapshotter = &fakeSnap{}
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess || edit.count() != 1 || res.Steps != 2 {
		t.Fatalf("edit %d, result %+v", edit.count(), res)
	}
	msgs := m.reqs()[1].Messages
	if a := msgs[len(msgs)-2]; a.Content != "" || len(a.ToolCalls) != 1 {
		t.Errorf("kept assistant message = %+v", a)
	}
	want := []string{"step.started", "tool.started", "tool.completed", "text", "step.finished", "patch", "retry",
		"step.started", "text", "step.finished"}
	if diff := cmp.Diff(want, sink.types()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
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

func TestCompactionTrimsToolOutputsWhenTheSummaryOverflows(t *testing.T) {
	t.Parallel()
	m := newModel(
		sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(fail(llm.ClassContextOverflow, 0)), // step 2
		sc(fail(llm.ClassContextOverflow, 0)), // summary request
		sc(text("summary"), finish(llm.FinishStop, 10, 1)),
		sc(text("done"), finish(llm.FinishStop, 10, 1)),
	)
	res := runTest(t, testConfig(m, &recSink{}, &fakeTool{name: "read"}))
	if res.Status != event.StatusSuccess || res.Compactions != 1 {
		t.Fatalf("result %+v", res)
	}
	trimmed := m.reqs()[3].Messages
	for _, msg := range trimmed {
		if msg.Role == llm.RoleTool && msg.Content != omittedOutput {
			t.Errorf("tool output kept in the trimmed summary request: %q", msg.Content)
		}
	}
}

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		files  map[string]string
		schema string
	}{
		{name: "agents", files: map[string]string{"AGENTS.md": "Run go test.\n", "CLAUDE.md": "ignored"}},
		{name: "claude", files: map[string]string{"CLAUDE.md": "Use tabs.\n"}, schema: outSchema},
		{name: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			m := newModel()
			cfg := testConfig(m, nil, &fakeTool{name: "read"})
			cfg.WorkTree = dir
			cfg.Instructions = "Keep changes minimal."
			cfg.OutputSchema = json.RawMessage(tc.schema)
			runTest(t, cfg)
			got := strings.ReplaceAll(m.reqs()[0].Messages[0].Content, dir, "/WORKTREE")
			golden.Check(t, filepath.Join("testdata", "system_"+tc.name+".golden"), []byte(got))
		})
	}
}

func TestSystemPromptDateFixedAtStart(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 1, 31, 23, 59, 0, 0, time.UTC)
	clock := day
	m := newModel(sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 1, 1)))
	cfg := testConfig(m, nil, &fakeTool{name: "read"})
	cfg.Now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	runTest(t, cfg)
	reqs := m.reqs()
	if reqs[0].Messages[0].Content != reqs[1].Messages[0].Content ||
		!strings.Contains(reqs[0].Messages[0].Content, "2026-02-01") {
		t.Errorf("system prompt changed across steps or wrong date:\n%s", reqs[1].Messages[0].Content)
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

func TestTrackCall(t *testing.T) {
	t.Parallel()
	s := NewSession(Config{Model: newModel()})
	c := func(name, args string) *llm.ToolCall {
		return &llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
	}
	steps := []struct {
		call *llm.ToolCall
		want bool
	}{
		{c("read", `{"a":1,"b":2}`), false},
		{c("read", `{"b":2, "a":1}`), false},
		{c("read", `{"a":1,"b":2}`), true},
		{c("read", `{"a":1,"b":2}`), true},
		{c("grep", `{"a":1,"b":2}`), false},
		{c("read", `{"a":1,"b":2}`), false},
	}
	for i, st := range steps {
		if got := s.trackCall(st.call); got != st.want {
			t.Errorf("call %d: repeated=%v, want %v", i, got, st.want)
		}
	}
}

func TestLastStepNoteSurvivesCompaction(t *testing.T) {
	t.Parallel()
	m := newModel(
		sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(fail(llm.ClassContextOverflow, 0)),
		sc(text("summary"), finish(llm.FinishStop, 10, 1)),
		sc(text("final words"), finish(llm.FinishStop, 10, 1)),
	)
	cfg := testConfig(m, &recSink{}, &fakeTool{name: "read"})
	cfg.Limits.MaxSteps = 2
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess || res.FinalMessage != "final words" {
		t.Fatalf("result %+v", res)
	}
	msgs := m.reqs()[3].Messages
	if last := msgs[len(msgs)-1]; last.Content != lastStepNote || m.reqs()[3].ToolChoice != llm.ToolChoiceNone {
		t.Errorf("after compaction the last step lost its note: %+v", msgs)
	}
}

func TestToolCallMatchesItsInputEvents(t *testing.T) {
	t.Parallel()
	events := []llm.Event{
		{Type: llm.EventToolInputStart, ID: "ev1", ToolName: "read"},
		{Type: llm.EventToolInputDelta, ID: "ev1", ToolName: "read", Delta: `{}`},
		{Type: llm.EventToolInputEnd, ID: "ev1", ToolName: "read"},
		{Type: llm.EventToolCall, ID: "ev1", ToolCall: &llm.ToolCall{ID: "call_9", Name: "read", NameAsSent: "read",
			Arguments: []byte(`{}`)}},
	}
	m := newModel(sc(events, finish(llm.FinishToolCalls, 1, 1)))
	res := runTest(t, testConfig(m, &recSink{}, &fakeTool{name: "read"}))
	msgs := m.reqs()[1].Messages
	a := msgs[len(msgs)-2]
	if res.Status != event.StatusSuccess || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_9" ||
		msgs[len(msgs)-1].ToolCallID != "call_9" {
		t.Fatalf("result %+v, assistant %+v", res, a)
	}
}

func TestEmptyReplyIsNotSentBack(t *testing.T) {
	t.Parallel()
	m := newModel(sc(finish(llm.FinishStop, 1, 0)), sc(text("ok"), finish(llm.FinishStop, 1, 1)))
	s := NewSession(testConfig(m, &recSink{}))
	if res, err := s.Run(t.Context()); err != nil || res.Status != event.StatusSuccess || res.FinalMessage != "" {
		t.Fatalf("run: %v %+v", err, res)
	}
	if _, err := s.Continue(t.Context(), "check failed"); err != nil {
		t.Fatal(err)
	}
	msgs := m.reqs()[1].Messages
	if len(msgs) != 3 || msgs[1].Role != llm.RoleUser || msgs[2].Role != llm.RoleUser {
		t.Errorf("messages after an empty reply: %+v", msgs)
	}
}

// badSink fails every write and panics on text events.
type badSink struct{ n int }

func (b *badSink) Emit(p event.Payload) error {
	b.n++
	if p.EventType() == "text" {
		panic("sink bug")
	}
	return errors.New("disk full")
}

func TestSinkFailuresDoNotStopTheRun(t *testing.T) {
	t.Parallel()
	sink := &badSink{}
	m := newModel(sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 1, 1)), sc(text("done"), finish(llm.FinishStop, 1, 1)))
	res := runTest(t, testConfig(m, sink, &fakeTool{name: "read"}))
	if res.Status != event.StatusSuccess || res.FinalMessage != "done" || sink.n != 7 {
		t.Fatalf("result %+v, %d emits", res, sink.n)
	}
}
