package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestContinueLast: --continue last continues the newest finished run
// under .runner/runs, passing over a newer one that never finished.
func TestContinueLast(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "status.txt says fixed."}.Reply(),
		llmtest.Turn{Text: "Still fixed."}.Reply(),
	)
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	if res := runRunner(t, repo, env, "exec", spec, "--base-url", srv.URL(), "--quiet"); res.code != 0 {
		t.Fatalf("first run: exit %d\n%s", res.code, res.stderr)
	}
	runs, err := os.ReadDir(filepath.Join(repo, ".runner", "runs"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("want one run under .runner/runs, got %v (%v)", runs, err)
	}
	first := filepath.Join(".runner", "runs", runs[0].Name())
	// A newer run that was killed: a history, no result.json.
	killed := filepath.Join(repo, ".runner", "runs", "99991231T235959Z-00000000")
	if err := os.MkdirAll(killed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(killed, "history.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res := runRunner(t, repo, env, "exec", spec, "--base-url", srv.URL(), "--continue", "last", "--prompt", "Check again.", "--out", out)
	if res.code != 0 {
		t.Fatalf("--continue last: exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "--continue last is "+first) {
		t.Errorf("stderr does not say which run it continues (%s):\n%s", first, res.stderr)
	}
	var rs event.RunStarted
	if err := readEvents(t, filepath.Join(out, "events.jsonl"))[0].Decode(&rs); err != nil || rs.Continues == nil || rs.Continues.Dir != first {
		t.Errorf("run.started continues = %+v (%v), want %s", rs.Continues, err, first)
	}
	if reqs := srv.Requests(); len(reqs) != 3 || !strings.Contains(string(reqs[2].Raw), "status.txt says fixed.") {
		t.Errorf("the continued request lacks the first run's conversation (%d requests)", len(reqs))
	}
}
