package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestEnvTemplateNotHidden: a committed .env.example at the work tree's
// root is an ordinary file in the sandbox: a command reads it, and under
// Landlock only what a command creates at the root (build/) is readable
// by that same command (every .env* was hidden, and a
// hidden file at a level makes what appears there unreadable until the
// next command under Landlock only, so `mkdir build && … && cat
// build/out.txt`, `npm ci && npm test` and `python3 -m venv .venv` failed
// on GitHub's ubuntu-24.04 runners). Real make and bash, every layer.
func TestEnvTemplateNotHidden(t *testing.T) {
	for pin, layers := range layerPins() {
		t.Run(pin, func(t *testing.T) {
			sup := sandbox.Probe()
			for _, l := range layers {
				if !slices.Contains(sup.Available(), l) {
					t.Skipf("layer %s is not available here: %s", l, sup.Missing())
				}
			}
			makefile := "all:\n\tmkdir -p build && echo built > build/out.txt && cat build/out.txt > seen.txt\n\t-cat .env.example > tmpl.txt\n"
			repo := gittest.Repo(t, map[string]string{"Makefile": makefile, ".env.example": "API_URL=http://localhost:8080\nAPI_KEY=changeme\n"})
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			r := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()}, pin: pin}.exec(t)
			if r.err != nil {
				t.Fatalf("exec: %v\n%s", r.err, r.stderr)
			}
			read := func(name string) string { b, _ := os.ReadFile(filepath.Join(repo, name)); return string(b) }
			if got := read("seen.txt"); got != "built\n" {
				t.Errorf("the command read back %q from the build/out.txt it made, want \"built\\n\"", got)
			}
			if got := read("tmpl.txt"); !strings.Contains(got, "API_KEY=changeme") {
				t.Errorf("the command read %q from .env.example, want its content", got)
			}
		})
	}
}
