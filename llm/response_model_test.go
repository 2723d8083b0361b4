package llm_test

import (
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestFinishStepNamesResponseModel: on every wire, finish-step carries
// the model the provider says answered (here a dated snapshot of the one
// asked for), and "" when the reply names none.
func TestFinishStepNamesResponseModel(t *testing.T) {
	t.Parallel()
	req := func(model string) llm.Request {
		return llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi."}}}
	}
	cases := []struct {
		name string
		p    streamer
		req  llm.Request
		want string
	}{
		{"chat", newProvider(t, llmtest.NewServer(t, llmtest.Turn{Model: "gpt-4.1-mini-2025-04-14", Text: "Hello."}.Reply()), 0),
			req("gpt-4.1-mini"), "gpt-4.1-mini-2025-04-14"},
		{"chat without a model", newProvider(t, llmtest.NewServer(t,
			sse(`{"choices":[{"index":0,"delta":{"content":"Hello."}}]}`, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)), 0),
			req("gpt-4.1-mini"), ""},
		{"responses", newResponses(t, llmtest.NewResponsesServer(t, rturn(llmtest.ResponsesTurn{Model: "gpt-5.1-codex-2025-11-13", Text: "Hello."}))),
			req("gpt-5.1-codex"), "gpt-5.1-codex-2025-11-13"},
		{"anthropic", newAnthropic(t, llmtest.NewAnthropicServer(t, turn(llmtest.AnthropicTurn{Model: "claude-sonnet-4-5-20250929", Text: "Hello."}))),
			req("claude-sonnet-4-5"), "claude-sonnet-4-5-20250929"},
	}
	for _, c := range cases {
		r := callOnce(t, c.p, c.req)
		if r.finish == nil {
			t.Errorf("%s: no finish-step: %v", c.name, r.err)
			continue
		}
		if r.finish.Model != c.want {
			t.Errorf("%s: finish-step Model = %q, want %q", c.name, r.finish.Model, c.want)
		}
	}
}
