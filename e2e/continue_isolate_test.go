package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestContinueTheDemo: the documented path after `make demo`, whose work
// tree is a subdirectory of another git repository. The refusal to
// continue an --isolate run before its patch is applied prints a command;
// run from elsewhere, it applies the patch (git apply from inside the
// subdirectory would skip every file and exit 0). Then the run continues
// on the same machine and directory, isolated again or not, and its
// patch is the whole conversation's change.
func TestContinueTheDemo(t *testing.T) {
	t.Parallel()
	outer := t.TempDir()
	project := filepath.Join(outer, "examples", "hello", "project")
	if err := os.CopyFS(project, os.DirFS(filepath.Join(repoRoot, "examples", "hello", "project"))); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, outer, "init", "-q")
	gittest.Run(t, outer, "add", ".")
	gittest.Run(t, outer, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hello")
	spec := filepath.Join(repoRoot, "examples", "hello", "task.yaml")
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	first := filepath.Join(outer, ".runner", "runs", "first")
	res := runRunner(t, outer, env, "exec", spec, "--repo", "examples/hello/project", "--isolate",
		"--replay", filepath.Join(repoRoot, "examples", "hello", "session.jsonl"), "--out", first, "--quiet")
	if res.code != 0 {
		t.Fatalf("demo: exit %d\n%s", res.code, res.stderr)
	}

	srv := newModel(t, llmtest.Turn{Text: "Nothing more to do."}.Reply(), llmtest.Turn{Text: "Still nothing."}.Reply())
	cont := func(out string, extra ...string) result {
		args := append([]string{"exec", spec, "--repo", "examples/hello/project", "--continue", first,
			"--prompt", "Anything else?", "--base-url", srv.URL(), "--out", filepath.Join(outer, ".runner", "runs", out), "--quiet"}, extra...)
		return runRunner(t, outer, env, args...)
	}
	res = cont("refused")
	_, hint, ok := strings.Cut(res.stderr, "from any directory: ")
	hint, _, _ = strings.Cut(hint, "), then continue")
	if res.code != 2 || !ok {
		t.Fatalf("continue before the patch is applied: exit %d, want 2 with a command to apply it\n%s", res.code, res.stderr)
	}
	sh := exec.CommandContext(t.Context(), "sh", "-c", hint)
	sh.Dir = t.TempDir()
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the hint %q: %v\n%s", hint, err, b)
	}
	if st := gittest.Run(t, outer, "status", "--porcelain"); !strings.Contains(st, "examples/hello/project/greet.go") {
		t.Fatalf("the hint %q applied nothing: git status %q", hint, st)
	}

	for _, c := range []struct {
		out   string
		extra []string
	}{{"isolated", []string{"--isolate"}}, {"in-place", nil}} {
		res := cont(c.out, c.extra...)
		if res.code != 0 {
			t.Fatalf("continue %s: exit %d\n%s", c.out, res.code, res.stderr)
		}
		patch, err := os.ReadFile(filepath.Join(outer, ".runner", "runs", c.out, "changes.patch"))
		if err != nil || !strings.Contains(string(patch), "greet.go") {
			t.Errorf("continue %s: changes.patch should be the conversation's change to greet.go (%v):\n%s", c.out, err, patch)
		}
	}
}
