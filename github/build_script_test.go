package github

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildScriptStampsAndKeepsPath runs scripts/build-runner.sh for real
// on a copy of the source without .git, as Actions downloads an action to
// .../_actions/OWNER/REPO/REF: the binary lands in RUNNER_TEMP/runner-bin,
// reports REF as its version, and the script wrote no GITHUB_PATH or
// GITHUB_ENV (the caller's PATH and Go stay as they were).
func TestBuildScriptStampsAndKeepsPath(t *testing.T) {
	if os.Getenv("RUNNER_SLOW_TESTS") != "1" {
		// A static (CGO_ENABLED=0) build from a cold cache takes minutes on
		// a shared 2-core machine; .ci/run can set RUNNER_SLOW_TESTS=1.
		t.Skip("builds the runner from scratch (minutes): set RUNNER_SLOW_TESTS=1 to run it")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	files, err := exec.CommandContext(t.Context(), "git", "-C", "..", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	src := filepath.Join(t.TempDir(), "_actions", "seed43ef5acb", "runner", "v9.8.7")
	for _, f := range strings.Fields(string(files)) {
		data, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			continue // deleted in the work tree
		}
		mode := os.FileMode(0o644)
		if fi, err := os.Stat(filepath.Join("..", f)); err == nil {
			mode = fi.Mode().Perm()
		}
		dst := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	temp := t.TempDir()
	out, ghPath, ghEnv := filepath.Join(temp, "output"), filepath.Join(temp, "path"), filepath.Join(temp, "env")
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(src, "scripts", "build-runner.sh"))
	cmd.Env = append(os.Environ(), "GITHUB_ACTION_PATH="+src, "RUNNER_TEMP="+temp, "GITHUB_OUTPUT="+out,
		"GITHUB_PATH="+ghPath, "GITHUB_ENV="+ghEnv, "GOTOOLCHAIN=local", "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build-runner.sh: %v\n%s", err, b)
	}
	got := parseOutputsText(t, out)
	if got["bin"] != filepath.Join(temp, "runner-bin", "runner") {
		t.Errorf("outputs %v", got)
	}
	v, err := exec.CommandContext(t.Context(), got["bin"], "version").Output()
	if err != nil || !strings.Contains(string(v), "v9.8.7") {
		t.Errorf("runner version = %q (%v), want the action's ref v9.8.7", v, err)
	}
	for _, f := range []string{ghPath, ghEnv} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s written: the caller's environment would change", f)
		}
	}
}

// parseOutputsText reads name=value lines of a GITHUB_OUTPUT file.
func parseOutputsText(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// TestBuildScriptTrustsItsCheckout: an action that is a git checkout owned
// by another user (a container job) still builds. go's VCS stamping runs
// git in it, which refuses such a repository ("dubious ownership"); the
// script lets git trust that one directory for the build only, after the
// GIT_CONFIG_* pairs the caller set. Real git and a real ownership check;
// the `go` on PATH runs the two git commands go's stamping runs and then
// stands in for the build.
func TestBuildScriptTrustsItsCheckout(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving the checkout to another user needs root")
	}
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(filepath.Join(src, "cmd", "runner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/m\n\ngo 1.26.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir() // no global git config of this machine (a safe.directory=* would hide the fault)
	gitEnv := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.CommandContext(t.Context(), "git", args...)
		cmd.Dir, cmd.Env = src, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, err := exec.CommandContext(t.Context(), "chown", "-R", "65534:65534", src).CombinedOutput(); err != nil {
		t.Skipf("chown: %v %s", err, out)
	}
	status := exec.CommandContext(t.Context(), "git", "status", "--porcelain")
	status.Dir, status.Env = src, gitEnv
	if out, err := status.CombinedOutput(); err == nil || !strings.Contains(string(out), "dubious ownership") {
		t.Fatalf("git accepts a checkout of another user here (%v, %s): the test would prove nothing", err, out)
	}
	fakeGo := t.TempDir()
	script := `#!/bin/bash
set -eu
# What go's VCS stamping runs (cmd/go/internal/vcs), then the build's output.
git status --porcelain >/dev/null
git -c log.showsignature=false log -1 --format=%H:%ct >/dev/null
[ "$(git config core.quotepath)" = false ] || { echo "fake go: the caller's GIT_CONFIG_* pair is lost" >&2; exit 9; }
out=""; prev=""
for a; do [ "$prev" = -o ] && out=$a; prev=$a; done
: > "$out"
`
	if err := os.WriteFile(filepath.Join(fakeGo, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	temp := t.TempDir()
	abs, err := filepath.Abs(filepath.Join("..", "scripts", "build-runner.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "bash", abs)
	cmd.Env = append(gitEnv[:2:2], "PATH="+fakeGo+":/usr/bin:/bin", "GITHUB_ACTION_PATH="+src, "RUNNER_TEMP="+temp,
		"GITHUB_OUTPUT="+filepath.Join(temp, "output"), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.quotepath", "GIT_CONFIG_VALUE_0=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build-runner.sh on a checkout of another user: %v\n%s", err, out)
	}
	if got := parseOutputsText(t, filepath.Join(temp, "output"))["bin"]; got != filepath.Join(temp, "runner-bin", "runner") {
		t.Errorf("bin output %q", got)
	}
}
