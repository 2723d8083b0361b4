package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestSecretsNeverInOutputs plants a secret in the environment and in a
// file the model reads, has the model repeat it, and finds it in no output:
// not in the log, the patch, result.json, summary.md, stdout or stderr. (The
// patch is the change itself: a secret the model writes into a file stays
// in it, or the patch would not apply.)
func TestSecretsNeverInOutputs(t *testing.T) {
	t.Parallel()
	const secret = "planted-Secret-value-7f3a9c21"
	spec, repo := smallRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "config.env"), []byte("SERVICE_TOKEN="+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "config")
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"config.env"}`)}}.Reply(),
		llmtest.Turn{Text: "The token is " + secret + ".",
			ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Done; the token was " + secret + "."}.Reply(),
	)
	out := t.TempDir()
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef", "SERVICE_TOKEN="+secret)
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL())
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}
	readEvents(t, filepath.Join(out, "events.jsonl"))
	outputs := map[string]string{"stdout": res.stdout, "stderr": res.stderr}
	for name, content := range readTree(t, out) {
		outputs[name] = content
	}
	for _, want := range []string{"events.jsonl", "changes.patch", "result.json", "summary.md"} {
		if _, ok := outputs[want]; !ok {
			t.Errorf("no %s in the out dir", want)
		}
	}
	for name, content := range outputs {
		for _, s := range []string{secret, "sk-test-0123456789abcdef"} {
			if strings.Contains(content, s) {
				t.Errorf("%s holds the secret %q", name, s)
			}
		}
	}
	if !strings.Contains(outputs["result.json"], "[REDACTED]") {
		t.Error("result.json shows no redaction of the final message")
	}
}
