package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeDemoIsTheReadmeCommand: the README's first set-up command is
// `make demo`, and the Makefile's demo target builds the binary and runs
// the bundled example through it (so exit codes are real), with the
// arguments the other hello tests use.
func TestMakeDemoIsTheReadmeCommand(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	setUp, _, _ := strings.Cut(strings.SplitN(string(readme), "## Set up\n", 2)[1], "\n## ")
	var cmds []string
	for _, line := range strings.Split(setUp, "\n") {
		if strings.HasPrefix(line, "    ") {
			cmds = append(cmds, strings.TrimSpace(line))
		}
	}
	if len(cmds) < 2 || cmds[0] != "make demo" || cmds[1] != "go test -race -timeout 30m ./..." {
		t.Fatalf("README set-up commands = %q, want make demo and go test -race -timeout 30m ./...", cmds)
	}
	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	want := "\tbin/runner " + strings.Join(helloArgs, " ") + "\n"
	if !strings.Contains(string(mk), "\ndemo: build\n") || !strings.Contains(string(mk), want) {
		t.Errorf("Makefile's demo target should build and run %q", want)
	}
}

// TestHelloWithoutGOCACHE: a newcomer's shell names no GOCACHE; the
// sandbox's private $HOME must not send Go to an empty build cache (a cold
// build of the standard library, past the bash timeout on a small
// machine): the example opens Go's default cache and the sandbox points Go
// at it, so the agent's `go test` runs warm. The run must show the bash
// step passing, not timing out.
func TestHelloWithoutGOCACHE(t *testing.T) {
	t.Parallel()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory: ", err)
	}
	var env []string
	for _, kv := range baseEnv(t) {
		if !strings.HasPrefix(kv, "GOCACHE=") && !strings.HasPrefix(kv, "XDG_CACHE_HOME=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	// Warm Go's default cache the way a newcomer's earlier `go build` did.
	warm := exec.CommandContext(t.Context(), "go", "test", "-count=1", "./...")
	warm.Dir, warm.Env = filepath.Join(repoRoot, "examples", "hello", "project"), env
	if b, err := warm.CombinedOutput(); err == nil {
		t.Fatalf("the hello project's tests should fail before the fix:\n%s", b)
	}
	out := t.TempDir()
	res := runRunner(t, repoRoot, env, append(append([]string{}, helloArgs...), "--out", out)...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "✓ bash  go test ./...") {
		t.Errorf("the agent's go test did not pass in the sandbox:\n%s", res.stderr)
	}
}
