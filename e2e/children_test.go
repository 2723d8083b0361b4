package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// offSpec runs bash unsandboxed (sandbox.mode: off) and allows the
// commands of the background-job script.
const offSpec = `version: 1
name: jobs
model: gpt-4.1-mini
prompt: Start the jobs.
permissions:
  read: allow
  bash: {"sleep *": allow, "setsid *": allow, "echo *": allow, "wait": allow}
limits: {tool_timeout: 10m}
sandbox: {mode: off}
`

// sleepsOf lists the pids of the sleeps whose argument holds id.
func sleepsOf(id string) []int {
	var out []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !strings.HasPrefix(string(b), "sleep\x00") || !strings.Contains(string(b), id) {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(filepath.Base(filepath.Dir(p)), &pid); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// TestUnsandboxedJobsDieWithTheRunner: with sandbox.mode off, a bash
// command that leaves background jobs (one in its process group, one
// that left it with setsid) is running when the built binary gets SIGTERM
// or SIGKILL; in both cases no job outlives the runner (SIGTERM: exit 130).
func TestUnsandboxedJobsDieWithTheRunner(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			_, repo := smallRepo(t)
			spec := filepath.Join(t.TempDir(), "task.yaml")
			if err := os.WriteFile(spec, []byte(offSpec), 0o644); err != nil {
				t.Fatal(err)
			}
			id := fmt.Sprintf("%012d", rand.Int64N(1_000_000_000_000)) // random per process: no other run's sleep has it
			script := fmt.Sprintf(`sleep 300.%s & setsid sleep 301.%s & echo started; wait`, id, id)
			args := fmt.Sprintf(`{"command":%q}`, script)
			srv := newModel(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", args)}}.Reply(),
				llmtest.Turn{Text: "never"}.Reply())
			cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", t.TempDir(), "--base-url", srv.URL(), "--quiet")
			cmd.Dir, cmd.Env = repo, append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef", "TMPDIR="+t.TempDir())
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			for deadline := time.Now().Add(30 * time.Second); len(sleepsOf(id)) < 2; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("the jobs never started (%d running)", len(sleepsOf(id)))
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second): // a hang guard
				_ = cmd.Process.Kill()
				t.Fatalf("no exit after %s", sig)
			}
			if code := cmd.ProcessState.ExitCode(); sig == syscall.SIGTERM && code != 130 {
				t.Errorf("exit %d (%v) after SIGTERM, want 130", code, err)
			}
			left := sleepsOf(id)
			for deadline := time.Now().Add(30 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = sleepsOf(id) {
				time.Sleep(20 * time.Millisecond) // the death signal is delivered asynchronously
			}
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if len(left) > 0 {
				t.Errorf("%d background jobs outlived the runner's %s", len(left), sig)
			}
		})
	}
}
