package runner

import (
	"context"
	"testing"

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
