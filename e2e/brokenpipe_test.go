package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestClosedOutputPipeKeepsTheRecord: `runner exec … 2>&1 | head -2`
// closes the runner's stdout and stderr before it writes them. The run
// must not die of SIGPIPE, nor fail because its console view cannot be
// shown: it finishes its work, exits with its own code (0 here), and
// leaves events.jsonl ending in run.finished, result.json and summary.md.
func TestClosedOutputPipeKeepsTheRecord(t *testing.T) {
	t.Parallel()
	spec, repo, srv := fixRun(t)
	out := filepath.Join(t.TempDir(), "out")
	w := closedPipe(t)
	cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", out, "--base-url", srv.URL())
	cmd.Dir = repo
	cmd.Env = append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	_ = w.Close()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		result, _ := os.ReadFile(filepath.Join(out, "result.json"))
		t.Fatalf("runner ended with %v with its output pipe closed; result.json:\n%s", err, result)
	case err != nil:
		t.Fatal(err)
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl")) // schema, gapless seq, run.finished last
	if fin := finished(t, recs); fin.Status != event.StatusSuccess || fin.ExitCode != 0 {
		t.Errorf("run.finished %+v", fin)
	}
	requireFiles(t, out, "result.json", "summary.md")
	if b, err := os.ReadFile(filepath.Join(repo, "status.txt")); err != nil || string(b) != "fixed\n" {
		t.Errorf("status.txt = %q, %v: the run did not go on", b, err)
	}
}

// TestClosedEventsPipeKeepsTheLog: with `--events -` the log is the
// stream on stdout, and `| head -2` closes it early. The run goes on to
// its end, the out dir keeps the whole log as events.jsonl (ending in
// run.finished) beside result.json and summary.md, and stderr says where
// it is.
func TestClosedEventsPipeKeepsTheLog(t *testing.T) {
	t.Parallel()
	spec, repo, srv := fixRun(t)
	out := filepath.Join(t.TempDir(), "out")
	w := closedPipe(t)
	cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", out, "--events", "-", "--base-url", srv.URL())
	cmd.Dir = repo
	cmd.Env = append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = w, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	_ = w.Close()
	if err != nil {
		t.Fatalf("runner ended with %v with the events pipe closed\n%s", err, stderr.String())
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl")) // schema, gapless seq, run.finished last
	if fin := finished(t, recs); fin.Status != event.StatusSuccess || fin.ExitCode != 0 {
		t.Errorf("run.finished %+v", fin)
	}
	requireFiles(t, out, "result.json", "summary.md")
	if want := "it is whole in " + filepath.Join(out, "events.jsonl"); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say where the log is (%q):\n%s", want, stderr.String())
	}
}

// fixRun is smallRepo with a model that writes status.txt and finishes.
func fixRun(t *testing.T) (spec, repo string, srv *llmtest.Server) {
	t.Helper()
	spec, repo = smallRepo(t)
	fixed, _ := json.Marshal(map[string]string{"path": "status.txt", "content": "fixed\n"})
	srv = newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", string(fixed))}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply(),
	)
	return spec, repo, srv
}

// closedPipe is the write end of a pipe whose reader is gone before the
// first write, as after `| head` has exited.
func closedPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}
