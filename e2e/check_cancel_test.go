package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestCheckCancelledByCtrlC: a check killed because the user pressed
// Ctrl-C (SIGINT to the binary) is "cancelled" on the console, in
// check.finished and in summary.md, not "failed (exit -1)" with the
// sandbox hint meant for checks that failed on their own.
func TestCheckCancelledByCtrlC(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	slow := strings.Replace(smallSpec, "run: grep -q fixed status.txt", "run: touch check-started && sleep 60", 1)
	if err := os.WriteFile(spec, []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", out, "--base-url", srv.URL())
	cmd.Dir, cmd.Env = repo, append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(repo, "check-started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the check never started\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 130 {
		t.Fatalf("exit %d (%v), want 130\n%s", cmd.ProcessState.ExitCode(), err, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "⊘ status cancelled") || strings.Contains(s, "failed (exit") || strings.Contains(s, "hint:") {
		t.Errorf("the console should say the check was cancelled, with no failure or sandbox hint:\n%s", s)
	}
	checks := ofType[event.CheckFinished](t, readEvents(t, filepath.Join(out, "events.jsonl")))
	if len(checks) != 1 || !checks[0].Cancelled || checks[0].Hint != "" {
		t.Errorf("check.finished = %+v, want one, cancelled, without a hint", checks)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil || !strings.Contains(string(summary), "cancelled") || strings.Contains(string(summary), "❌ failed") {
		t.Errorf("summary.md (%v) should say the check was cancelled:\n%s", err, summary)
	}
}
