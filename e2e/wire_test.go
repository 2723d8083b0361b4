package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestWireChatRefusedForResponsesModel: naming the chat wire for a model
// that cannot call tools there is refused before any model call (exit 2),
// and the message names the fix.
func TestWireChatRefusedForResponsesModel(t *testing.T) {
	t.Parallel()
	_, repo := smallRepo(t)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	body := strings.Replace(smallSpec, "model: gpt-4.1-mini", "model: gpt-6-astra\nprovider: {wire: chat}", 1)
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newModel(t, llmtest.Text("never asked"))
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	res := runRunner(t, repo, env, "exec", spec, "--out", t.TempDir(), "--base-url", srv.URL(), "--quiet")
	if res.code != 2 || !strings.Contains(res.stderr, "wire: responses") || len(srv.Requests()) != 0 {
		t.Fatalf("exit %d, %d model calls, stderr:\n%s", res.code, len(srv.Requests()), res.stderr)
	}
	// --wire overrides the spec: the anthropic wire asks for its own key.
	res = runRunner(t, repo, env, "exec", spec, "--out", t.TempDir(), "--base-url", srv.URL(), "--wire", "anthropic", "--quiet")
	if res.code != 2 || strings.Contains(res.stderr, "cannot call tools") || !strings.Contains(res.stderr, "ANTHROPIC_API_KEY is not set") {
		t.Errorf("--wire anthropic over provider.wire chat: exit %d\n%s", res.code, res.stderr)
	}
}
