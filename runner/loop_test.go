package runner

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

func TestMultiStepToolUse(t *testing.T) {
	t.Parallel()
	read := &fakeTool{name: "read"}
	write := &fakeTool{name: "write"}
	m := newModel(
		sc(reasoning("look first"), text("Reading."), call("c1", "read", `{"path":"a.go"}`), finish(llm.FinishToolCalls, 100, 10)),
		sc(call("c2", "write", `{"path":"a.go"}`), finish(llm.FinishToolCalls, 150, 10)),
		sc(text("Fixed the bug in a.go."), finish(llm.FinishStop, 200, 10)),
	)
	sink := &recSink{}
	res := runTest(t, testConfig(m, sink, write, read))

	if res.Status != event.StatusSuccess || res.FinalMessage != "Fixed the bug in a.go." || res.Steps != 3 {
		t.Fatalf("result = %+v", res)
	}
	if res.Tokens.Input != 450 || res.Tokens.Output != 30 {
		t.Errorf("tokens = %+v", res.Tokens)
	}
	if read.count() != 1 || write.count() != 1 {
		t.Errorf("tool calls: read %d, write %d", read.count(), write.count())
	}
	want := []string{
		"step.started", "reasoning", "text", "tool.started", "tool.completed", "step.finished",
		"step.started", "tool.started", "tool.completed", "step.finished",
		"step.started", "text", "step.finished",
	}
	if diff := cmp.Diff(want, sink.types()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	reqs := m.reqs()
	if names := []string{reqs[0].Tools[0].Name, reqs[0].Tools[1].Name}; !slices.Equal(names, []string{"read", "write"}) {
		t.Errorf("tools not sorted by name: %v", names)
	}
	// Step 2 sees step 1's call and its result.
	msgs := reqs[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleTool || last.ToolCallID != "c1" || !strings.Contains(last.Content, "read ok") {
		t.Errorf("tool result message = %+v", last)
	}
	if a := msgs[len(msgs)-2]; a.Role != llm.RoleAssistant || a.Content != "Reading." || a.Reasoning != "look first" || len(a.ToolCalls) != 1 {
		t.Errorf("assistant message = %+v", a)
	}
	assertAppendOnly(t, reqs)
}

// assertAppendOnly checks each request's messages start with the previous
// request's messages, byte for byte.
func assertAppendOnly(t *testing.T, reqs []llm.Request) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1].Messages, reqs[i].Messages
		if len(cur) < len(prev) {
			t.Fatalf("request %d has fewer messages than request %d", i, i-1)
		}
		for j := range prev {
			a, _ := json.Marshal(prev[j])
			b, _ := json.Marshal(cur[j])
			if string(a) != string(b) {
				t.Fatalf("request %d message %d changed:\n%s\n%s", i, j, a, b)
			}
		}
	}
}

func TestStopWithToolCallsStillRuns(t *testing.T) {
	t.Parallel()
	edit := &fakeTool{name: "edit"}
	m := newModel(
		sc(call("c1", "edit", `{"path":"x"}`), finish(llm.FinishStop, 10, 1)),
		sc(text("all done"), finish(llm.FinishStop, 10, 1)),
	)
	res := runTest(t, testConfig(m, &recSink{}, edit))
	if edit.count() != 1 || res.Status != event.StatusSuccess || res.Steps != 2 || res.FinalMessage != "all done" {
		t.Fatalf("edit calls %d, result %+v", edit.count(), res)
	}
}

func TestDoomLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		policy   Policy
		runs     int
		denials  int
		wantLast string
	}{
		{name: "denied by default", runs: 2, denials: 1, wantLast: "Error: permission denied (doom_loop)"},
		{name: "allowed by policy", policy: allowPolicy{}, runs: 3, denials: 0, wantLast: "grep ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			grep := &fakeTool{name: "grep"}
			same := func(id string) script {
				return sc(call(id, "grep", `{"path": "x"}`), finish(llm.FinishToolCalls, 10, 1))
			}
			m := newModel(same("c1"), same("c2"), sc(call("c3", "grep", `{ "path":"x" }`), finish(llm.FinishToolCalls, 10, 1)))
			sink := &recSink{}
			cfg := testConfig(m, sink, grep)
			cfg.Policy = tc.policy
			res := runTest(t, cfg)
			if grep.count() != tc.runs || res.Denials != tc.denials || res.Status != event.StatusSuccess {
				t.Fatalf("runs %d, result %+v", grep.count(), res)
			}
			msgs := m.reqs()[3].Messages
			if got := msgs[len(msgs)-1].Content; !strings.HasPrefix(got, tc.wantLast) {
				t.Errorf("third result = %q", got)
			}
			if tc.denials > 0 {
				d := sink.of("permission.denied")[0].(event.PermissionDenied)
				if d.Permission != "doom_loop" || d.Pattern != "grep" || d.Rule != nil {
					t.Errorf("denial = %+v", d)
				}
				f := sink.of("tool.failed")[0].(event.ToolFailed)
				if !f.Denied {
					t.Errorf("tool.failed not marked denied: %+v", f)
				}
			}
		})
	}
}

func TestMaxSteps(t *testing.T) {
	t.Parallel()
	loop := func(id string) script {
		return sc(call(id, "read", `{"path":"`+id+`"}`), finish(llm.FinishToolCalls, 10, 1))
	}
	t.Run("tools on the last step", func(t *testing.T) {
		t.Parallel()
		read := &fakeTool{name: "read"}
		m := newModel(loop("a"), loop("b"), loop("c"))
		cfg := testConfig(m, &recSink{}, read)
		cfg.Limits.MaxSteps = 2
		s := NewSession(cfg)
		res, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != event.StatusMaxSteps || res.Steps != 2 || read.count() != 1 {
			t.Fatalf("read %d, result %+v", read.count(), res)
		}
		reqs := m.reqs()
		if len(reqs) != 2 || reqs[0].ToolChoice != llm.ToolChoiceAuto || reqs[1].ToolChoice != llm.ToolChoiceNone {
			t.Fatalf("requests: %d, choices %q", len(reqs), reqs[len(reqs)-1].ToolChoice)
		}
		if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != llm.RoleUser || last.Content != lastStepNote {
			t.Errorf("last-step note missing: %+v", last)
		}
		// max_steps covers the whole session: a Continue stops at once.
		res, err = s.Continue(t.Context(), "the tests still fail")
		if err != nil || res.Status != event.StatusMaxSteps || len(m.reqs()) != 2 {
			t.Fatalf("continue: %v, %+v, %d requests", err, res, len(m.reqs()))
		}
	})
	t.Run("final message on the last step", func(t *testing.T) {
		t.Parallel()
		m := newModel(loop("a"), sc(text("summary"), finish(llm.FinishStop, 10, 1)))
		cfg := testConfig(m, &recSink{}, &fakeTool{name: "read"})
		cfg.Limits.MaxSteps = 2
		res := runTest(t, cfg)
		if res.Status != event.StatusSuccess || res.FinalMessage != "summary" {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestBudgetStop(t *testing.T) {
	t.Parallel()
	step := func(id string) script {
		return sc(call(id, "read", `{"path":"`+id+`"}`), finish(llm.FinishToolCalls, 1000, 100))
	}
	for _, tc := range []struct {
		name   string
		limits Limits
		pricer Pricer
		steps  int
		cost   *float64
	}{
		{name: "cost", limits: Limits{MaxCostUSD: 1.5}, pricer: fixedPricer{perCall: ptr(1.0)}, steps: 2, cost: ptr(2.0)},
		{name: "tokens", limits: Limits{MaxTokens: 3000}, steps: 3},
		{name: "unknown price", limits: Limits{MaxCostUSD: 0.01, MaxTokens: 1100}, pricer: fixedPricer{}, steps: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newModel(step("a"), step("b"), step("c"), step("d"))
			cfg := testConfig(m, &recSink{}, &fakeTool{name: "read"})
			cfg.Limits, cfg.Pricer = tc.limits, tc.pricer
			res := runTest(t, cfg)
			if res.Status != event.StatusBudgetExceeded || res.Steps != tc.steps {
				t.Fatalf("result %+v", res)
			}
			if !cmp.Equal(res.CostUSD, tc.cost) {
				t.Errorf("cost = %v, want %v", res.CostUSD, tc.cost)
			}
		})
	}
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	partial := script{events: []llm.Event{
		{Type: llm.EventStart},
		{Type: llm.EventTextStart, ID: "t"},
		{Type: llm.EventTextDelta, ID: "t", Delta: "half an ans"},
		fail(llm.ClassRetryable, 0)[0],
	}}
	m := newModel(sc(fail(llm.ClassRetryable, 0)), partial, sc(text("whole answer"), finish(llm.FinishStop, 10, 1)))
	sink := &recSink{}
	res := runTest(t, testConfig(m, sink))
	if res.Status != event.StatusSuccess || res.FinalMessage != "whole answer" || res.Steps != 1 {
		t.Fatalf("result %+v", res)
	}
	want := []string{"step.started", "retry", "retry", "text", "step.finished"}
	if diff := cmp.Diff(want, sink.types()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	r := sink.of("retry")[1].(event.Retry)
	if r.Attempt != 2 || r.ErrorClass != "retryable" || r.Step != 1 {
		t.Errorf("retry = %+v", r)
	}
	reqs := m.reqs()
	if !cmp.Equal(reqs[0], reqs[2]) {
		t.Errorf("the retried request differs from the first:\n%s", cmp.Diff(reqs[0], reqs[2]))
	}
	for _, msg := range m.reqs()[2].Messages {
		if strings.Contains(msg.Content, "half") {
			t.Errorf("partial output kept: %+v", msg)
		}
	}
}

func TestRetryAfterIsHonouredAndCapped(t *testing.T) {
	t.Parallel()
	s := NewSession(Config{Model: newModel(), Backoff: Backoff{Base: 1, Max: 5_000_000, Jitter: -1}})
	if got := s.retryDelay(&llm.Error{Class: llm.ClassRetryable, RetryAfter: 3_000_000}); got != 3_000_000 {
		t.Errorf("delay = %v, want the server's 3ms", got)
	}
	if got := s.retryDelay(&llm.Error{Class: llm.ClassRetryable, RetryAfter: 9_000_000}); got != 5_000_000 {
		t.Errorf("delay = %v, want the 5ms cap", got)
	}
}

func TestResendGoesAtOnce(t *testing.T) {
	t.Parallel()
	s := NewSession(Config{Model: newModel(), Backoff: Backoff{Base: 5_000_000, Max: 9_000_000, Jitter: -1}})
	if got := s.retryDelay(&llm.Error{Class: llm.ClassRetryable, Resend: true}); got != 0 {
		t.Errorf("delay = %v, want none for a request the provider already changed", got)
	}
	if got := s.retryDelay(&llm.Error{Class: llm.ClassRetryable}); got == 0 {
		t.Error("control: a plain retryable error waits out the backoff")
	}
}

func TestRetriesExhaustedAndFatal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		scripts []script
		retries int
		class   event.ErrorClass
	}{
		{name: "retries exhausted", scripts: []script{sc(fail(llm.ClassRetryable, 0)), sc(fail(llm.ClassRetryable, 0)),
			sc(fail(llm.ClassRetryable, 0)), sc(fail(llm.ClassRetryable, 0))}, retries: 3, class: "retryable"},
		{name: "fatal", scripts: []script{sc(fail(llm.ClassFatal, 0))}, class: "fatal"},
		{name: "stream cut", scripts: []script{sc(text("x")), sc(text("x")), sc(text("x")), sc(text("x"))}, retries: 3, class: "retryable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sink := &recSink{}
			res := runTest(t, testConfig(newModel(tc.scripts...), sink))
			var e *Error
			if res.Status != event.StatusError || !errors.As(res.Err, &e) || e.Class != tc.class {
				t.Fatalf("result %+v", res)
			}
			if got := len(sink.of("retry")); got != tc.retries {
				t.Errorf("retry events = %d, want %d", got, tc.retries)
			}
			if got := sink.types(); got[len(got)-1] != "step.finished" {
				t.Errorf("last event = %s", got[len(got)-1])
			}
		})
	}
}

func TestToolErrorsBecomeResults(t *testing.T) {
	t.Parallel()
	boom := &fakeTool{name: "bash", run: func(context.Context, tools.Call) (tools.Result, error) { panic("kaboom") }}
	slow := &fakeTool{name: "slow", run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}}
	broken := &fakeTool{name: "list", run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{}, errors.New("disk on fire")
	}}
	m := newModel(
		sc(call("c1", "bash", `{}`), call("c2", "nope", `{}`), call("c3", "list", `{"path":`),
			call("c4", "slow", `{}`), call("c5", "list", `{}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(text("gave up"), finish(llm.FinishStop, 10, 1)),
	)
	sink := &recSink{}
	cfg := testConfig(m, sink, boom, slow, broken)
	cfg.Limits.ToolTimeout = 10 * 1e6 // 10ms
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess {
		t.Fatalf("result %+v", res)
	}
	msgs := m.reqs()[1].Messages
	results := msgs[len(msgs)-5:]
	for i, want := range []string{
		"Error: tool panicked: kaboom",
		`Error: unknown tool "nope"; available tools: bash, list, slow`,
		`Error: invalid arguments for list: not a valid JSON object: {"path":`,
		"Error: tool timed out after 10ms",
		"Error: disk on fire",
	} {
		if !strings.HasPrefix(results[i].Content, want) {
			t.Errorf("result %d = %q, want prefix %q", i, results[i].Content, want)
		}
	}
	if got := len(sink.of("tool.failed")); got != 5 {
		t.Errorf("tool.failed events = %d, want 5", got)
	}
	if broken.count() != 1 {
		t.Errorf("a call with invalid arguments ran")
	}
}

func TestMaxDenialsBlocks(t *testing.T) {
	t.Parallel()
	edit := &fakeTool{name: "edit", run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		return tools.Result{IsError: true, Output: "permission denied: edit .github/x",
			Denial: &tools.Denial{Permission: "edit", Pattern: ".github/x", Reason: "default deny"}}, nil
	}}
	var scripts []script
	for _, id := range []string{"a", "b", "c", "d"} {
		scripts = append(scripts, sc(call(id, "edit", `{"path":"`+id+`"}`), finish(llm.FinishToolCalls, 10, 1)))
	}
	sink := &recSink{}
	cfg := testConfig(newModel(scripts...), sink, edit)
	cfg.Limits.MaxDenials = 3
	res := runTest(t, cfg)
	if res.Status != event.StatusBlocked || res.Denials != 3 || res.Steps != 3 {
		t.Fatalf("result %+v", res)
	}
	if got := len(sink.of("permission.denied")); got != 3 {
		t.Errorf("permission.denied events = %d", got)
	}
	if res.RunError().Class != event.ClassBlocked {
		t.Errorf("run error = %+v", res.RunError())
	}
}

func TestFinishReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		scripts []script
		status  event.Status
		final   string
	}{
		{name: "length continued once", scripts: []script{
			sc(text("part one"), finish(llm.FinishLength, 10, 1)), sc(text("part two"), finish(llm.FinishStop, 10, 1)),
		}, status: event.StatusSuccess, final: "part two"},
		{name: "length twice", scripts: []script{
			sc(text("a"), finish(llm.FinishLength, 10, 1)), sc(text("b"), finish(llm.FinishLength, 10, 1)),
		}, status: event.StatusFailed, final: "b"},
		{name: "length, tools, length", scripts: []script{
			sc(text("a"), finish(llm.FinishLength, 10, 1)), sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 10, 1)),
			sc(text("b"), finish(llm.FinishLength, 10, 1)), sc(text("c"), finish(llm.FinishStop, 10, 1)),
		}, status: event.StatusSuccess, final: "c"},
		{name: "content filter", scripts: []script{sc(finish(llm.FinishContentFilter, 10, 1))}, status: event.StatusFailed},
		// An unknown reason is not "done" (llm.lookupFinish): continued once,
		// then failed.
		{name: "unknown reason continued once", scripts: []script{
			sc(text("ok"), finish("", 10, 1)), sc(text("all done"), finish(llm.FinishStop, 10, 1)),
		}, status: event.StatusSuccess, final: "all done"},
		{name: "unknown reason twice", scripts: []script{
			sc(text("a"), finish(llm.FinishUnknown, 10, 1)), sc(text("b"), finish(llm.FinishUnknown, 10, 1)),
		}, status: event.StatusFailed, final: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runTest(t, testConfig(newModel(tc.scripts...), &recSink{}, &fakeTool{name: "read"}))
			if res.Status != tc.status || res.FinalMessage != tc.final {
				t.Fatalf("result %+v", res)
			}
		})
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
