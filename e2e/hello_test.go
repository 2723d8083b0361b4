package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// helloArgs is the README's first command, after `go run ./cmd/runner`.
var helloArgs = []string{ //nolint:gochecknoglobals // constant list
	"exec", "examples/hello/task.yaml", "--repo", "examples/hello/project",
	"--isolate", "--replay", "examples/hello/session.jsonl",
}

// helloTurns is the scripted model side of the bundled example: read the
// code, fix the inverted condition, run the tests, answer.
func helloTurns() []llmtest.Reply {
	const model = "gpt-4.1-mini"
	return []llmtest.Reply{
		llmtest.Turn{Model: model, Text: "Let me look at the code first.",
			ToolCalls: []llmtest.ToolCall{{ID: "call_read", Name: "read", Arguments: `{"path":"greet.go"}`}}}.Reply(),
		llmtest.Turn{Model: model, Text: "The condition is inverted: a non-empty name is replaced by \"world\".",
			ToolCalls: []llmtest.ToolCall{{ID: "call_edit", Name: "edit",
				Arguments: `{"path":"greet.go","old_string":"\tif name != \"\" {","new_string":"\tif name == \"\" {"}`}}}.Reply(),
		llmtest.Turn{Model: model,
			ToolCalls: []llmtest.ToolCall{{ID: "call_test", Name: "bash",
				Arguments: `{"command":"go test ./...","description":"Run the tests"}`}}}.Reply(),
		llmtest.Turn{Model: model, Text: "Greeting replaced every non-blank name with \"world\" because its " +
			"condition was inverted (`!=` instead of `==`); it now falls back to \"world\" only for blank names, and the tests pass."}.Reply(),
	}
}

// TestHelloCassette regenerates examples/hello/session.jsonl with -update:
// it runs the README's command against the scripted fake model with
// --record instead of --replay, so the cassette is exactly what --record
// writes. Without -update it checks that the cassette holds one exchange per
// scripted turn.
func TestHelloCassette(t *testing.T) {
	cassette := filepath.Join(repoRoot, "examples", "hello", "session.jsonl")
	if golden.Update() {
		srv := newModel(t, helloTurns()...)
		args := append([]string{}, helloArgs[:len(helloArgs)-2]...)
		args = append(args, "--record", cassette, "--base-url", srv.URL(), "--out", t.TempDir())
		env := append(baseEnv(t), "OPENAI_API_KEY=sk-scripted-not-a-real-key")
		res := runRunner(t, repoRoot, env, args...)
		if res.code != 0 {
			t.Fatalf("record: exit %d\n%s", res.code, res.stderr)
		}
	}
	data, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != len(helloTurns()) {
		t.Fatalf("cassette holds %d exchanges, the script %d; run go test ./e2e -run TestHelloCassette -update",
			len(lines), len(helloTurns()))
	}
	if strings.Contains(string(data), "sk-scripted") {
		t.Error("the cassette holds the API key")
	}
}

// TestHelloReplay runs the README's first command exactly as written, with
// no API key and no network, and finds exit 0, the fix in the patch, the
// original project untouched and every file of the out dir.
func TestHelloReplay(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	for _, p := range []string{"examples/hello/task.yaml", "examples/hello/session.jsonl"} {
		copyFileT(t, filepath.Join(repoRoot, p), filepath.Join(cwd, p))
	}
	copyDirT(t, filepath.Join(repoRoot, "examples/hello/project"), filepath.Join(cwd, "examples/hello/project"))
	before := readTree(t, filepath.Join(cwd, "examples/hello/project"))

	res := runRunner(t, cwd, baseEnv(t), helloArgs...)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "read") || !strings.Contains(res.stdout, "tests pass") {
		t.Errorf("want progress on stderr and the final message on stdout;\nstdout: %s\nstderr: %s", res.stdout, res.stderr)
	}
	runs, err := filepath.Glob(filepath.Join(cwd, ".runner", "runs", "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("want one out dir under .runner/runs, got %v (%v)", runs, err)
	}
	out := runs[0]
	requireFiles(t, out, "events.jsonl", "changes.patch", "result.json", "summary.md")
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	if fin := finished(t, recs); fin.Status != event.StatusSuccess || fin.FilesChanged != 1 {
		t.Errorf("run.finished %+v, want success with 1 file changed", fin)
	}
	if started := ofType[event.RunStarted](t, recs); len(started) != 1 || started[0].BaseURL != "replay:examples/hello/session.jsonl" {
		t.Errorf("run.started %+v, want base_url replay:examples/hello/session.jsonl", started)
	}
	if strings.Contains(res.stderr, "different prompt") {
		t.Errorf("the cassette's own task warned of a different prompt:\n%s", res.stderr)
	}
	checks := ofType[event.CheckFinished](t, recs)
	if len(checks) != 1 || !checks[0].Passed {
		t.Errorf("checks %+v, want one that passed", checks)
	}
	patch, err := os.ReadFile(filepath.Join(out, "changes.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patch), "+\tif name == \"\" {") {
		t.Errorf("patch does not hold the fix:\n%s", patch)
	}
	if after := readTree(t, filepath.Join(cwd, "examples/hello/project")); !equalMaps(before, after) {
		t.Error("--isolate changed the original project")
	}
}
