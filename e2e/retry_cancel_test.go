package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// smallSpec is a task on a tiny repository whose check passes once
// status.txt says fixed.
const smallSpec = `version: 1
name: small
model: gpt-4.1-mini
prompt: Make status.txt say fixed.
permissions:
  read: allow
  edit:
    "**": allow
checks:
  - name: status
    run: grep -q fixed status.txt
retries: 1
`

// smallRepo writes the spec and a one-file git repository; it returns the
// spec path and the repository.
func smallRepo(t *testing.T) (spec, repo string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "init")
	spec = filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(smallSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec, repo
}

// TestCheckFailsThenPassesAfterRetry: the agent stops too early, the check
// fails, its output goes back to the model, the agent fixes the file and
// the check passes on its second attempt.
func TestCheckFailsThenPassesAfterRetry(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	srv := newModel(t,
		llmtest.Turn{Text: "Nothing to do."}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "status.txt now says fixed."}.Reply(),
	)
	out := t.TempDir()
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
	}
	if res.stderr != "" {
		t.Errorf("--quiet printed on stderr: %s", res.stderr)
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	checks := ofType[event.CheckFinished](t, recs)
	if len(checks) != 2 || checks[0].Passed || checks[0].Attempt != 1 || !checks[1].Passed || checks[1].Attempt != 2 {
		t.Fatalf("check.finished %+v, want attempt 1 failed, attempt 2 passed", checks)
	}
	if fin := finished(t, recs); fin.Status != event.StatusSuccess || fin.Steps != 3 || fin.FilesChanged != 1 {
		t.Errorf("run.finished %+v, want success after 3 steps with 1 file", fin)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	msgs := reqs[1].Messages()
	last := msgs[len(msgs)-1]
	text, _ := last["content"].(string)
	if last["role"] != "user" || !strings.Contains(text, "grep -q fixed status.txt") ||
		!strings.Contains(text, "exit code 2") || !strings.Contains(text, checks[0].Output[:20]) {
		t.Errorf("the second call does not end with the check's feedback: %v", last)
	}
	if strings.TrimSpace(res.stdout) != "status.txt now says fixed." {
		t.Errorf("stdout %q, want the final message", res.stdout)
	}
}

// TestChecksStillFailing: the check fails after the retry too: status
// failed, exit 1.
func TestChecksStillFailing(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply(), llmtest.Turn{Text: "Still done."}.Reply())
	out := t.TempDir()
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL())
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", res.code, res.stderr)
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	if fin := finished(t, recs); fin.Status != event.StatusFailed || fin.ExitCode != 1 || fin.Error == nil || fin.Error.Class != "checks" {
		t.Errorf("run.finished %+v, want failed, exit 1, class checks", fin)
	}
	requireFiles(t, out, "changes.patch", "result.json", "summary.md")
}

// TestNoKeyFailsFast: without a key and without --replay, exec exits 2
// with a clear message before writing anything.
func TestNoKeyFailsFast(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	out := filepath.Join(t.TempDir(), "out")
	res := runRunner(t, repo, baseEnv(t), "exec", spec, "--out", out)
	if res.code != 2 || !strings.Contains(res.stderr, "OPENAI_API_KEY") {
		t.Fatalf("exit %d, stderr %q; want 2 and a message naming OPENAI_API_KEY", res.code, res.stderr)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the out dir was created: %v", err)
	}
}

// TestSIGTERMCancels sends SIGTERM while the model stalls mid-stream: the
// process exits 130, the log ends with run.finished cancelled and the
// patch holds the change made before the signal.
func TestSIGTERMCancels(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	stall := llmtest.Turn{Text: "Let me think about this for a very long time."}.Reply()
	stall.Stall, stall.StallAfter = true, 200
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"half\n"}`)}}.Reply(),
		stall,
	)
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", out, "--base-url", srv.URL())
	cmd.Dir = repo
	cmd.Env = append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); len(srv.Requests()) < 2; {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the runner never made its second call\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the stalled stream start
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second): // a hang guard, not a timing assertion
		_ = cmd.Process.Kill()
		t.Fatalf("the runner did not exit after SIGTERM\n%s", stderr.String())
	}
	t.Logf("exited %s after SIGTERM", time.Since(signalled))
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, stderr.String())
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	if fin := finished(t, recs); fin.Status != event.StatusCancelled || fin.ExitCode != 130 ||
		fin.Error == nil || fin.Error.Message != "cancelled (SIGTERM)" {
		t.Errorf("run.finished %+v, want cancelled (SIGTERM), 130", fin)
	}
	// The console and the final message say it once, naming the signal.
	if out := stderr.String(); strings.Count(out, "cancelled (SIGTERM)") != 2 || strings.Contains(out, "cancelled: cancelled") ||
		!strings.Contains(out, "cut short by the cancel") {
		t.Errorf("stderr does not say the cancel once per place:\n%s", out)
	}
	patch, err := os.ReadFile(filepath.Join(out, "changes.patch"))
	if err != nil || !strings.Contains(string(patch), "+half") {
		t.Errorf("patch %q (%v), want the change made before the signal", patch, err)
	}
	requireFiles(t, out, "result.json", "summary.md")
}
