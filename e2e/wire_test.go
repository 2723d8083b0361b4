package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestWireChatRefusedForResponsesModel: naming the chat wire for a model
// the catalog says cannot call tools there is refused before any model
// call (exit 2), the message names the fix, and models: can override it.
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
	// The spec's models: entry overrides the catalog: an endpoint that serves
	// the model with tools over chat runs it.
	if err := os.WriteFile(spec, []byte(body+"models:\n  gpt-6-astra: {wires: [chat]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chat := newModel(t, llmtest.Turn{ToolCalls: writeCall("fixed")}.Reply(), llmtest.Turn{Text: "Done."}.Reply())
	res = runRunner(t, repo, env, "exec", spec, "--out", t.TempDir(), "--base-url", chat.URL(), "--quiet")
	if res.code != 0 || len(chat.Requests()) != 2 {
		t.Fatalf("wires: [chat] in models: exit %d, %d model calls\n%s", res.code, len(chat.Requests()), res.stderr)
	}
	// --wire overrides the spec's provider.wire: the catalog judges the
	// flag's wire.
	res = runRunner(t, repo, env, "exec", spec, "--out", t.TempDir(), "--base-url", srv.URL(), "--wire", "anthropic", "--quiet")
	if res.code != 2 || !strings.Contains(res.stderr, "over wire anthropic") {
		t.Errorf("--wire anthropic over provider.wire chat: exit %d\n%s", res.code, res.stderr)
	}
}

// TestWireTenSteps runs a 10-step session through the binary on each
// native wire (anthropic also on Bedrock and Vertex); at least 80% of the
// input tokens from the third step on are cache reads, as step.finished
// reports them.
func TestWireTenSteps(t *testing.T) {
	t.Parallel()
	call := func(i int) []llmtest.ToolCall {
		return []llmtest.ToolCall{{Name: "write", Arguments: fmt.Sprintf(`{"path":"notes/step%d.txt","content":"step %d\n"}`, i, i)}}
	}
	platforms := map[string]claudePlatform{}
	for _, pl := range claudePlatforms() {
		platforms[pl.name] = pl
	}
	for _, wire := range []string{"anthropic", "bedrock", "vertex", "responses"} {
		t.Run(wire, func(t *testing.T) {
			t.Parallel()
			var spec, repo, url string
			var env []string
			if pl, ok := platforms[wire]; ok {
				var script []llmtest.AnthropicStep
				for i := range 9 {
					script = append(script, anthropicStep(llmtest.AnthropicTurn{Text: fmt.Sprintf("Note %d.", i+1), ToolCalls: call(i + 1)}))
				}
				script = append(script, anthropicStep(llmtest.AnthropicTurn{ToolCalls: writeCall("fixed")}), anthropicStep(llmtest.AnthropicTurn{Text: "Done."}))
				srv := pl.server(t, script...)
				url, env = srv.URL(), pl.env(t, srv)
				_, repo = smallRepo(t)
				spec = writeSpec(t, pl.spec)
			} else {
				var script []llmtest.ResponsesStep
				for i := range 9 {
					script = append(script, responsesStep(llmtest.ResponsesTurn{Reasoning: "Next note.", ToolCalls: call(i + 1)}))
				}
				script = append(script, responsesStep(llmtest.ResponsesTurn{ToolCalls: writeCall("fixed")}), responsesStep(llmtest.ResponsesTurn{Text: "Done."}))
				url = llmtest.NewResponsesServer(t, script...).URL()
				spec, repo = responsesTask(t)
				env = append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
			}
			out := t.TempDir()
			res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", url, "--quiet")
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			steps := ofType[event.StepFinished](t, readEvents(t, filepath.Join(out, "events.jsonl")))
			if len(steps) != 11 {
				t.Fatalf("%d steps, want 11", len(steps))
			}
			var input, read int64
			for _, s := range steps[2:] {
				input += s.Tokens.Input
				read += s.Tokens.CacheRead
			}
			share := float64(read) / float64(input)
			t.Logf("%s: cache reads %d of %d input tokens from step 3 on (%.1f%%)", wire, read, input, 100*share)
			if share < 0.80 {
				t.Errorf("cache reads are %.1f%% of input tokens from step 3 on, want at least 80%%", 100*share)
			}
		})
	}
}

func writeSpec(t *testing.T, body string) string {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}
