package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// TestEventsMatchSchema runs sessions that emit every event type the
// runner writes and validates each JSONL line against the published
// schema.
func TestEventsMatchSchema(t *testing.T) {
	t.Parallel()
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	denyAll := &fakeTool{name: "edit", run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{IsError: true, Output: "denied", Denial: &tools.Denial{
			Permission: "edit", Pattern: "a", Reason: "default deny"}}, nil
	}}
	write := &fakeTool{name: "write", run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Output: "ok", Touched: []string{"a.go"}, Metadata: map[string]any{"bytes": 3}}, nil
	}}
	same := func(id string) script { return sc(call(id, "write", `{}`), finish(llm.FinishToolCalls, 10, 1)) }
	m := newModel(
		sc(fail(llm.ClassRetryable, 0)),
		sc(reasoning("think"), text("go"), call("c1", "edit", `{}`), call("c2", "nope", `{`), finish(llm.FinishToolCalls, 10, 1)),
		same("c3"), same("c4"), same("c5"),
		sc(fail(llm.ClassContextOverflow, 0)),
		sc(text("summary"), finish(llm.FinishStop, 10, 1)),
		sc(call("c6", StructuredOutputTool, `{"fixed":3}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(call("c7", StructuredOutputTool, `{"fixed":true}`), finish(llm.FinishToolCalls, 10, 1)),
	)
	var buf bytes.Buffer
	w := event.NewWriter(&buf, "run-1")
	cfg := testConfig(m, w, denyAll, write)
	cfg.Snapshotter = &fakeSnap{}
	cfg.Pricer = fixedPricer{perCall: ptr(0.01)}
	cfg.OutputSchema = json.RawMessage(outSchema)
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess {
		t.Fatalf("result %+v", res)
	}
	seen := map[string]bool{}
	for i, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if err := v.Validate(line); err != nil {
			t.Errorf("line %d: %v\n%s", i+1, err, line)
		}
		var env event.Envelope
		_ = json.Unmarshal(line, &env)
		seen[env.Type] = true
	}
	for _, typ := range []string{"step.started", "text", "reasoning", "tool.started", "tool.completed", "tool.failed",
		"permission.denied", "retry", "compaction", "step.finished", "patch"} {
		if !seen[typ] {
			t.Errorf("no %s event emitted", typ)
		}
	}
}
