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
