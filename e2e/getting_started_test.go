package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// gettingStarted is one example of docs/getting-started.md: its tool, the
// fix the scripted model makes and the test command it runs.
type gettingStarted struct {
	dir, tool, path, old, new, test string
}

// TestGettingStartedExamples runs each language's example spec through the
// built binary: the scripted model fixes the bug, runs the project's test
// command under the spec's rules, and the spec's check passes.
func TestGettingStartedExamples(t *testing.T) {
	t.Parallel()
	for _, ex := range []gettingStarted{
		{"node", "npm", "sum.js", "let i = 1;", "let i = 0;", "npm test"},
		{"python", "pytest", "calc.py", "(len(xs) + 1)", "len(xs)", "pytest -q -p no:cacheprovider"},
		{"rust", "cargo", "src/lib.rs", ".min()", ".max()", "cargo test --offline"},
	} {
		t.Run(ex.dir, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(ex.tool); err != nil {
				t.Skipf("%s is not installed (%v): its getting-started example cannot run", ex.tool, err)
			}
			src := filepath.Join(repoRoot, "examples", "getting-started", ex.dir)
			repo := filepath.Join(t.TempDir(), "project")
			copyDirT(t, filepath.Join(src, "project"), repo)
			gittest.Run(t, repo, "init", "-q", "-b", "main")
			gittest.Run(t, repo, "add", "-A")
			gittest.Run(t, repo, "commit", "-q", "-m", "init")
			args, err := json.Marshal(map[string]string{"path": ex.path, "old_string": ex.old, "new_string": ex.new})
			if err != nil {
				t.Fatal(err)
			}
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("edit", string(args))}}.Reply(),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"`+ex.test+`"}`)}}.Reply(),
				llmtest.Turn{Text: "Fixed the bug; the tests pass."}.Reply())
			out := t.TempDir()
			env := append(baseEnv(t), "OPENAI_API_KEY=sk-scripted-not-a-real-key")
			res := runRunner(t, repo, env, "exec", filepath.Join(src, "task.yaml"), "--repo", repo,
				"--out", out, "--base-url", srv.URL())
			recs := readEvents(t, filepath.Join(out, "events.jsonl"))
			for _, f := range ofType[event.ToolFailed](t, recs) {
				t.Errorf("tool %s failed: %s", f.Tool, f.Error)
			}
			for _, c := range ofType[event.ToolCompleted](t, recs) {
				if code, ok := c.Metadata["exit_code"].(float64); ok && code != 0 {
					t.Errorf("%s exited %v:\n%s", c.Tool, code, c.Output)
				}
			}
			checks := ofType[event.CheckFinished](t, recs)
			if len(checks) == 0 || !checks[len(checks)-1].Passed {
				t.Errorf("the spec's check did not pass: %+v", checks)
			}
			if res.code != 0 {
				t.Fatalf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
			}
			if fin := finished(t, recs); fin.Status != "success" {
				t.Errorf("status %s, want success", fin.Status)
			}
			if !strings.Contains(res.stdout, "tests pass") {
				t.Errorf("stdout %q lacks the final answer", res.stdout)
			}
		})
	}
}
