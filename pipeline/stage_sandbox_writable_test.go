package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestWritableBroadRefused runs the attack for real: sandbox.writable
// names, through a variable, the directory holding the work tree, and
// the agent's `make` writes into a checkout beside it. Without
// allow_broad the run stops before anything runs: exit 2, the error at
// the entry's file:line:col saying what it opens and how to fix it, no
// model call, nothing written. With allow_broad: true (the control,
// under every layer pinned and with the sandbox off) the same make
// writes beside the work tree: the hole was real.
func TestWritableBroadRefused(t *testing.T) {
	requireTool(t, "make")
	for _, pin := range attackPins() {
		for _, allow := range []bool{false, true} {
			name := pin + "/refused"
			if allow {
				name = pin + "/allow_broad"
			}
			t.Run(name, func(t *testing.T) {
				requirePin(t, pin)
				t.Setenv("XDG_CACHE_HOME", t.TempDir())
				parent := t.TempDir()
				repo := filepath.Join(parent, "repo")
				sibling := filepath.Join(parent, "sibling")
				mustWrite(t, filepath.Join(sibling, "README"), "another checkout\n")
				files := map[string]string{"Makefile": "all:\n\techo pwned > ../sibling/owned\n"}
				for n, c := range files {
					mustWrite(t, filepath.Join(repo, n), c)
				}
				gittest.Run(t, repo, "init", "-q")
				gittest.Run(t, repo, "add", "-A")
				gittest.Run(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
				section := "sandbox:\n  writable:\n    - $GOCACHE_X\n    - $CHECKOUTS\n"
				if allow {
					section += "  allow_broad: true\n"
				}
				if pin == "off" {
					section += "  mode: \"off\"\n"
				}
				spec := filepath.Join(t.TempDir(), "task.yaml")
				mustWrite(t, spec, gateSpec+section)
				env := []string{"PATH=" + os.Getenv("PATH"), "CHECKOUTS=" + parent, "GOCACHE_X=" + t.TempDir()}
				if pin != "off" {
					env = append(env, sandbox.LayersEnv+"="+pin)
				}
				srv := newModel(t, makeTurn(), llmtest.Turn{Text: "Built."}.Reply())
				var stderr bytes.Buffer
				_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
					APIKey: testKey, Stderr: &stderr, Environ: env})
				_, werr := os.Stat(filepath.Join(sibling, "owned"))
				if allow {
					if err != nil || werr != nil {
						t.Fatalf("with allow_broad the run should write beside the work tree: exec %v, owned: %v\n%s", err, werr, stderr.String())
					}
					return
				}
				if ExitCode(err) != ExitUsage {
					t.Fatalf("exit %d (%v), want 2", ExitCode(err), err)
				}
				msg := err.Error()
				for _, want := range []string{spec + ":13:7: sandbox.writable[1]: \"$CHECKOUTS\" is " + parent,
					"a directory holding the work tree", "name the cache directory itself", "allow_broad: true"} {
					if !strings.Contains(msg, want) {
						t.Errorf("the error %q does not say %q", msg, want)
					}
				}
				if werr == nil {
					t.Error("the refused run wrote beside the work tree")
				}
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("the refused run called the model %d times", n)
				}
			})
		}
	}
}

// TestWritableBroadHome: an entry that expands to the runner's $HOME, or
// a directory holding it, is refused at its position too.
func TestWritableBroadHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home", "u")
	spec, repo := execFixture(t)
	mustWrite(t, spec, runSpec+"sandbox:\n  writable: [$CACHE_ROOT]\n")
	srv := newModel(t)
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
		APIKey: testKey, Stderr: &bytes.Buffer{}, Environ: []string{"HOME=" + home, "CACHE_ROOT=" + filepath.Dir(home)}})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "sandbox.writable[0]: \"$CACHE_ROOT\"") ||
		!strings.Contains(err.Error(), "the runner's $HOME ("+home+")") {
		t.Fatalf("exit %d: %v", ExitCode(err), err)
	}
}
