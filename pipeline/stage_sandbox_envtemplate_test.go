package pipeline

import (
	"bytes"
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
			spec := filepath.Join(t.TempDir(), "task.yaml")
			mustWrite(t, spec, gateSpec)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			srv := newModel(t, makeTurn(), llmtest.Turn{Text: "Built."}.Reply())
			var stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
				APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr, Environ: []string{"PATH=" + os.Getenv("PATH"), sandbox.LayersEnv + "=" + pin}})
			if err != nil {
				t.Fatalf("exec: %v\n%s", err, stderr.String())
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
