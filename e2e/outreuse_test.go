package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestReusedOutReplacesEverything: a run whose --out holds an earlier
// run's outputs says it replaces them, and does: the continued run's
// run.patch and an MCP server's mcp/ stderr, which this run does not
// write, are gone, not left to pass for this run's. Other files stay.
func TestReusedOutReplacesEverything(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed once\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Wrote one."}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed twice\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Wrote two."}.Reply(),
		llmtest.Turn{Text: "Nothing to do."}.Reply(),
	)
	first, out := t.TempDir(), t.TempDir()
	if res := runRunner(t, repo, env, "exec", spec, "--out", first, "--base-url", srv.URL(), "--quiet"); res.code != 0 {
		t.Fatalf("first run: exit %d\n%s", res.code, res.stderr)
	}
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--continue", first, "--prompt", "Again.", "--quiet")
	if res.code != 0 {
		t.Fatalf("continued run: exit %d\n%s", res.code, res.stderr)
	}
	for name, data := range map[string]string{"mcp/files.stderr": "a server's stderr\n", "notes.txt": "mine\n"} {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	requireFiles(t, out, "run.patch", "history.jsonl", "mcp/files.stderr")
	res = runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL())
	if res.code != 0 || !strings.Contains(res.stderr, "this run replaces them") {
		t.Fatalf("third run: exit %d, want 0 with the note\n%s", res.code, res.stderr)
	}
	for _, gone := range []string{"run.patch", "mcp"} {
		if _, err := os.Stat(filepath.Join(out, gone)); !os.IsNotExist(err) {
			t.Errorf("%s of the replaced run is still in --out (%v)", gone, err)
		}
	}
	requireFiles(t, out, "notes.txt", "result.json", "history.jsonl")
}
