package e2e

import (
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestModelShorthand: --model sonnet with only ANTHROPIC_API_KEY set runs
// the catalog's current Sonnet over the anthropic wire, sending its full
// name, and says which model it took.
func TestModelShorthand(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	srv := llmtest.NewAnthropicServer(t,
		anthropicStep(llmtest.AnthropicTurn{ToolCalls: writeCall("fixed")}),
		anthropicStep(llmtest.AnthropicTurn{Text: "status.txt says fixed."}))
	env := append(baseEnv(t), "ANTHROPIC_API_KEY=sk-ant-test-0123456789", "ANTHROPIC_BASE_URL="+srv.URL())
	res := runRunner(t, repo, env, "exec", spec, "--model", "sonnet", "--out", t.TempDir())
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "model sonnet is claude-sonnet-4-5") || strings.Contains(res.stderr, "warning: model") {
		t.Errorf("stderr does not name the model taken, or warns of it:\n%s", res.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || reqs[0].Body["model"] != "claude-sonnet-4-5" {
		t.Errorf("the first request did not ask for claude-sonnet-4-5: %v", reqs)
	}
}

// TestUnknownModelWarns: a model the catalog does not know still runs (a
// gateway's own name), with a warning at start that its cost is unknown
// and naming the close catalog entries.
func TestUnknownModelWarns(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	res := runRunner(t, repo, env, "exec", spec, "--model", "gpt-4.1-minii", "--out", t.TempDir(), "--base-url", srv.URL())
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}
	want := `runner: warning: model "gpt-4.1-minii" is not in the model catalog, so its cost is unknown`
	if !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "did you mean gpt-4.1-mini") {
		t.Errorf("stderr lacks the unknown-model warning:\n%s", res.stderr)
	}
}
