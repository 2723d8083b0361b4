package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/runner/event"
)

// bigTree writes a work tree of n small files in directories of 100, and
// a task spec for it; it returns the spec and the tree.
func bigTree(t *testing.T, n int) (spec, repo string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "big")
	line := bytes.Repeat([]byte("generated line of a big tree\n"), 4)
	for i := range n {
		dir := filepath.Join(repo, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), line, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec = filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(smallSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec, repo
}

// copying waits until a runner-run-* directory in tmp other than stale
// holds the start of the copy of repo (its first directory), and returns
// false when the process ended first.
func copying(tmp, repo string, stale []string, done chan error) bool {
	for {
		select {
		case err := <-done:
			go func() { done <- err }() // for the caller's wait
			return false
		default:
		}
		m, _ := filepath.Glob(filepath.Join(tmp, "runner-run-*", filepath.Base(repo), "d000"))
		for _, p := range m {
			if !slices.Contains(stale, filepath.Dir(filepath.Dir(p))) {
				return true
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestSignalDuringIsolateCopy sends real signals to the built binary
// while --isolate copies a tree of 20,000 files, ten times: SIGINT and
// SIGTERM each end in exit 130, an out dir whose log runs from run.started
// (no base tree: the copy never finished) to run.finished cancelled
// naming the signal, result.json and summary.md saying cancelled, and no
// temporary directory left. The first iteration is SIGKILL (nothing runs
// after it): its copy stays behind until the next run starts and
// collects it.
func TestSignalDuringIsolateCopy(t *testing.T) {
	t.Parallel()
	spec, repo := bigTree(t, 20_000)
	tmp := t.TempDir()
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef", "TMPDIR="+tmp)
	signals := []syscall.Signal{syscall.SIGKILL, syscall.SIGINT, syscall.SIGTERM}
	for i := range 10 {
		sig := signals[min(i, 1+i%2)]
		stale, _ := filepath.Glob(filepath.Join(tmp, "runner-run-*"))
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--repo", repo, "--isolate", "--out", out,
			"--base-url", "http://127.0.0.1:1/v1", "--quiet")
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !copying(tmp, repo, stale, done) {
			t.Fatalf("iteration %d: the runner ended before its copy began\n%s", i, stderr.String())
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
			_ = cmd.Process.Kill()
			t.Fatalf("iteration %d: no exit after %s\n%s", i, sig, stderr.String())
		}
		left, _ := filepath.Glob(filepath.Join(tmp, "runner-run-*"))
		if sig == syscall.SIGKILL {
			if len(left) != 1 {
				t.Fatalf("after SIGKILL: %v in TMPDIR, want the killed run's copy", left)
			}
			continue
		}
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
			t.Fatalf("iteration %d (%s): exit %v, want 130\n%s", i, sig, err, stderr.String())
		}
		if len(left) != 0 {
			t.Errorf("iteration %d (%s): left in TMPDIR: %v", i, sig, left)
		}
		recs := readEvents(t, filepath.Join(out, "events.jsonl"))
		var started event.RunStarted
		if err := recs[0].Decode(&started); err != nil || started.BaseTree != "" || len(recs) != 2 {
			t.Errorf("iteration %d: base tree %q, %d events: the signal did not come during the copy", i, started.BaseTree, len(recs))
		}
		wantMsg := map[syscall.Signal]string{syscall.SIGINT: "cancelled (SIGINT)", syscall.SIGTERM: "cancelled (SIGTERM)"}[sig]
		fin := finished(t, recs)
		if fin.Status != event.StatusCancelled || fin.ExitCode != 130 || fin.Error == nil || fin.Error.Message != wantMsg {
			t.Errorf("iteration %d (%s): run.finished %+v", i, sig, fin)
		}
		for _, f := range []string{"result.json", "summary.md"} {
			if data, err := os.ReadFile(filepath.Join(out, f)); err != nil || !strings.Contains(string(data), "cancelled") {
				t.Errorf("iteration %d: %s (%v):\n%s\nstderr:\n%s", i, f, err, data, stderr.String())
			}
		}
	}
}
