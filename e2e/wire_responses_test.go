package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// responsesSpec is the small task over the responses wire.
var responsesSpec = strings.NewReplacer("model: claude-sonnet-4-5", "model: gpt-5.1-codex",
	"provider: {wire: anthropic}", "provider: {wire: responses}").Replace(anthropicSpec)

func responsesStep(t llmtest.ResponsesTurn) llmtest.ResponsesStep {
	return llmtest.ResponsesStep{Turn: t}
}

func responsesTask(t *testing.T) (spec, repo string) {
	t.Helper()
	_, repo = smallRepo(t)
	return writeSpec(t, responsesSpec), repo
}

// TestResponsesWire drives the built binary over the responses wire: a
// 500 retried, a 3-step tool session with reasoning carried back
// encrypted, cached tokens priced, the cassette replayed, and --continue
// whose first request starts with the earlier request's bytes.
func TestResponsesWire(t *testing.T) {
	t.Parallel()
	spec, repo := responsesTask(t)
	serverError := llmtest.OpenAIError(500, "server_error", "", "", "The server had an error while processing your request.")
	srv := llmtest.NewResponsesServer(t,
		llmtest.ResponsesStep{Raw: &serverError},
		responsesStep(llmtest.ResponsesTurn{Reasoning: "Two goes.", EncryptedContent: "gAAAAB-enc-1", ToolCalls: writeCall("half")}),
		responsesStep(llmtest.ResponsesTurn{Text: "Now the real thing.", ToolCalls: writeCall("fixed")}),
		responsesStep(llmtest.ResponsesTurn{Text: "status.txt says fixed."}),
	)
	out := filepath.Join(repo, ".runner", "runs", "first")
	cassette := filepath.Join(t.TempDir(), "session.jsonl")
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--record", cassette, "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if r := srv.Rejections(); len(r) > 0 {
		t.Fatalf("the Responses personality rejected: %v", r)
	}
	steps := checkWireRun(t, out, "responses")
	if steps[2].CostUSD == nil {
		t.Errorf("step 3 not priced: %+v", steps[2])
	}
	reqs := srv.Requests()
	if !strings.Contains(string(reqs[2].Raw), `"encrypted_content":"gAAAAB-enc-1"`) {
		t.Errorf("the reasoning item did not go back with its encrypted content")
	}
	checkReplay(t, spec, cassette)

	srv2 := llmtest.NewResponsesServer(t, responsesStep(llmtest.ResponsesTurn{Text: "Still fixed."}))
	srv2.Cache = srv.Cache
	// The server's lock, taken once after the write, orders it before
	// every request the runner process makes, as the race detector sees it.
	_ = srv2.Requests()
	res = runRunner(t, repo, env, "exec", spec, "--out", filepath.Join(repo, ".runner", "runs", "second"), "--base-url", srv2.URL(),
		"--continue", out, "--prompt", "Check it again.", "--quiet")
	if res.code != 0 {
		t.Fatalf("continue exit %d\n%s", res.code, res.stderr)
	}
	checkContinuedPrefix(t, string(reqs[len(reqs)-1].Raw), string(srv2.Requests()[0].Raw))
	if u := srv2.Usages(); len(u) != 1 || u[0].CachedTokens == 0 {
		t.Errorf("continued usage %+v, want cached tokens", u)
	}
}

// TestResponsesWireIncomplete: response.incomplete (max_output_tokens)
// ends its step with finish reason length.
func TestResponsesWireIncomplete(t *testing.T) {
	t.Parallel()
	spec, repo := responsesTask(t)
	srv := llmtest.NewResponsesServer(t,
		responsesStep(llmtest.ResponsesTurn{Text: "I will now write a very long", Incomplete: "max_output_tokens"}),
		responsesStep(llmtest.ResponsesTurn{ToolCalls: writeCall("fixed")}),
		responsesStep(llmtest.ResponsesTurn{Text: "Done."}),
	)
	out := t.TempDir()
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet")
	steps := ofType[event.StepFinished](t, readEvents(t, filepath.Join(out, "events.jsonl")))
	if len(steps) == 0 || steps[0].FinishReason != "length" {
		t.Fatalf("steps %+v (exit %d)\n%s", steps, res.code, res.stderr)
	}
}
