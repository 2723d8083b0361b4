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
	// Commands are the lines of its ```sh blocks (TestDocCommands requires
	// fences).
	var cmds []string
	inFence := false
	for _, line := range strings.Split(setUp, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			inFence = !inFence && strings.TrimPrefix(line, "```") == "sh"
		case inFence && strings.TrimSpace(line) != "":
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

// TestDemoWithCachesElsewhere: the demo passes when the environment puts
// Go's caches elsewhere than their defaults under $HOME, as developer
// machines and CI images do. The example opens [$GOCACHE,
// ~/.cache/go-build]; with XDG_CACHE_HOME set, Go's build cache is
// $XDG_CACHE_HOME/go-build, and ~/.cache/go-build must mean that one, or
// Go meets a read-only cache and the replay runs out of replies.
func TestDemoWithCachesElsewhere(t *testing.T) {
	t.Parallel()
	gocache := goEnv(t, "GOCACHE")
	// Warm caches where each variable puts them: the real ones, seen from
	// a $HOME that does not hold them.
	xdg := filepath.Dir(gocache)
	if filepath.Base(gocache) != "go-build" {
		xdg = t.TempDir() // a cold build: slower, still the same question
	}
	mods := t.TempDir() // the demo needs no module: an empty cache elsewhere
	for _, c := range []struct {
		name string
		set  []string
	}{
		{"XDG_CACHE_HOME", []string{"XDG_CACHE_HOME=" + xdg}},
		{"GOCACHE", []string{"GOCACHE=" + gocache}},
		{"GOMODCACHE", []string{"GOMODCACHE=" + mods, "GOCACHE=" + gocache}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := append([]string{"HOME=" + t.TempDir()}, c.set...)
			for _, kv := range baseEnv(t) {
				name, _, _ := strings.Cut(kv, "=")
				if name != "HOME" && name != "GOCACHE" && name != "XDG_CACHE_HOME" && name != "GOMODCACHE" {
					env = append(env, kv)
				}
			}
			res := runRunner(t, repoRoot, env, append(append([]string{}, helloArgs...), "--out", t.TempDir())...)
			if res.code != 0 || !strings.Contains(res.stderr, "✓ bash  go test ./...") {
				t.Fatalf("%s: exit %d, want 0 with the agent's go test passing in the sandbox:\n%s", c.set, res.code, res.stderr)
			}
		})
	}
}

// TestReplayExhaustedAfterSandboxRefusal: when the sandbox refuses what
// the recorded run could do (here Go's build cache, left read-only), the
// replay runs out of replies; the error must name the refusal and the
// spec keys that open the sandbox, not only ask for a new recording.
func TestReplayExhaustedAfterSandboxRefusal(t *testing.T) {
	t.Parallel()
	gocache := goEnv(t, "GOCACHE")
	if filepath.Base(gocache) != "go-build" {
		t.Skip("GOCACHE is not <dir>/go-build: no XDG cache dir to leave read-only")
	}
	task, err := os.ReadFile(filepath.Join(repoRoot, "examples", "hello", "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const open = "writable: [$GOCACHE, ~/.cache/go-build]"
	if !strings.Contains(string(task), open) {
		t.Fatalf("examples/hello/task.yaml no longer says %q", open)
	}
	spec := filepath.Join(t.TempDir(), "task.yaml")
	closed := strings.Replace(string(task), open, "writable: ["+t.TempDir()+"]", 1)
	if err := os.WriteFile(spec, []byte(closed), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + filepath.Dir(gocache)}
	for _, kv := range baseEnv(t) {
		name, _, _ := strings.Cut(kv, "=")
		if name != "HOME" && name != "GOCACHE" && name != "XDG_CACHE_HOME" {
			env = append(env, kv)
		}
	}
	args := append([]string{"exec", spec}, helloArgs[2:]...)
	res := runRunner(t, repoRoot, env, append(args, "--out", t.TempDir())...)
	if res.code != 2 || !strings.Contains(res.stderr, "cassette exhausted") {
		t.Fatalf("exit %d, want 2 with the cassette exhausted:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"the sandbox seems to have refused", "read-only file system", "sandbox.writable"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the error does not say %q:\n%s", want, res.stderr)
		}
	}
}
