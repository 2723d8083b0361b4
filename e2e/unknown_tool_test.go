package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// noToolSpec has no permissions: every tool is denied, none is offered.
const noToolSpec = `version: 1
name: adhoc
model: gpt-4.1-mini
prompt: |
  fix the tests
sandbox: {mode: off}
`

// TestUnknownToolIsNotSuccess runs a spec that offers no tool against a
// model that calls read anyway and then claims success: the run is
// failed, class blocked, and the log records a failed call, not a denial.
func TestUnknownToolIsNotSuccess(t *testing.T) {
	t.Parallel()
	_, repo := smallRepo(t)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(noToolSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"README"}`)}}.Reply(),
		llmtest.Turn{Text: "Fixed the tests."}.Reply(),
	)
	out := filepath.Join(t.TempDir(), "out")
	res := runRunner(t, repo, append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef"),
		"exec", spec, "--out", out, "--base-url", srv.URL())
	if res.code != 1 {
		t.Fatalf("exit %d, want 1 (the only call named an unknown tool)\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "give the agent no tool") {
		t.Errorf("stderr does not warn that the spec offers no tool:\n%s", res.stderr)
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	fin := finished(t, recs)
	if fin.Status != event.StatusFailed || fin.Error == nil || fin.Error.Class != event.ClassBlocked ||
		!strings.Contains(fin.Error.Message, `unknown tool "read"`) {
		t.Errorf("run.finished: status %s, error %+v; want failed, blocked, naming the unknown tool", fin.Status, fin.Error)
	}
	if fin.Denials != 0 || len(ofType[event.PermissionDenied](t, recs)) != 0 {
		t.Errorf("an unknown tool is recorded as a permission denial: %d denials", fin.Denials)
	}
	failed := ofType[event.ToolFailed](t, recs)
	if len(failed) != 1 || failed[0].Tool != "read" || !strings.Contains(failed[0].Error, "available tools: none") {
		t.Errorf("tool.failed events = %+v, want one for read saying no tool is available", failed)
	}
}
