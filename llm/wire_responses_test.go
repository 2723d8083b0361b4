package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestResponsesThreeStepSession: reasoning summaries stream as reasoning,
// reasoning items go back with their encrypted_content, parallel calls
// get their function_call_output, and the personality accepts every
// request (store: false, no item ids).
func TestResponsesThreeStepSession(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewResponsesServer(t,
		rturn(llmtest.ResponsesTurn{Reasoning: "Read the test first.", EncryptedContent: "gAAAAB-enc-1", Text: "Reading.",
			ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path": "calc/calc_test.go"}`}}}),
		rturn(llmtest.ResponsesTurn{Text: "Two at once.", ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "read", Arguments: `{"path":"calc/calc.go"}`},
			{ID: "call_b", Name: "grep", Arguments: `{"path":"calc","command":"Add"}`}}}),
		rturn(llmtest.ResponsesTurn{Text: "Fixed."}),
	)
	steps := threeSteps(t, newResponses(t, srv), "gpt-5.1-codex", srv.Rejections)
	if steps[0].msg.Reasoning != "Read the test first." || len(steps[1].msg.ToolCalls) != 2 {
		t.Errorf("step 1 reasoning %q, step 2 calls %+v", steps[0].msg.Reasoning, steps[1].msg.ToolCalls)
	}
	reqs := srv.Requests()
	if reqs[0].Header.Get("Authorization") != "Bearer sk-test" || reqs[0].Body["store"] != false {
		t.Errorf("auth %q store %v", reqs[0].Header.Get("Authorization"), reqs[0].Body["store"])
	}
	second := string(reqs[1].Raw)
	for _, want := range []string{`"encrypted_content":"gAAAAB-enc-1"`, `"include":["reasoning.encrypted_content"]`,
		`"arguments":"{\"path\": \"calc/calc_test.go\"}"`, `{"type":"function_call_output","call_id":"call_llmtest1"`} {
		if !strings.Contains(second, want) {
			t.Errorf("second request lacks %s:\n%s", want, second[strings.Index(second, `"input"`):])
		}
	}
	if !strings.HasPrefix(string(reqs[2].Raw), strings.TrimSuffix(second, "]}")) {
		t.Errorf("the third request does not start with the second's bytes")
	}
}

// TestResponsesEndings maps response.incomplete reasons and classifies
// response.failed, error events and cut streams.
func TestResponsesEndings(t *testing.T) {
	t.Parallel()
	req := llm.Request{Model: "gpt-5.1", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for reason, want := range map[string]llm.FinishReason{"max_output_tokens": llm.FinishLength, "content_filter": llm.FinishContentFilter} {
		srv := llmtest.NewResponsesServer(t, rturn(llmtest.ResponsesTurn{Text: "partial", Incomplete: reason}))
		r := callOnce(t, newResponses(t, srv), req)
		if r.finish == nil || r.finish.FinishReason != want {
			t.Errorf("incomplete %s: %+v, want %s", reason, r.finish, want)
		}
	}
	raw := func(r llmtest.Reply) llmtest.ResponsesStep { return llmtest.ResponsesStep{Raw: &r} }
	for _, tc := range []struct {
		name  string
		step  llmtest.ResponsesStep
		class llm.ErrorClass
	}{
		{"failed server_error", rturn(llmtest.ResponsesTurn{Text: "x", FailedCode: "server_error"}), llm.ClassRetryable},
		{"failed quota", rturn(llmtest.ResponsesTurn{FailedCode: "insufficient_quota"}), llm.ClassFatal},
		{"error event", raw(llmtest.SSE("event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit reached\",\"param\":null,\"sequence_number\":1}\n\n")), llm.ClassRetryable},
		{"context", raw(llmtest.OpenAIError(400, "invalid_request_error", "input", "context_length_exceeded", "Your input exceeds the context window of this model.")), llm.ClassContextOverflow},
		{"cut", rturn(llmtest.ResponsesTurn{Text: "half", CutBeforeEnd: true}), llm.ClassRetryable},
	} {
		srv := llmtest.NewResponsesServer(t, tc.step)
		r := callOnce(t, newResponses(t, srv), req)
		if r.err == nil || r.err.Class != tc.class {
			t.Errorf("%s: %v, want class %s", tc.name, r.err, tc.class)
		}
		if tc.name == "cut" && !errors.Is(r.err, llm.ErrIncompleteStream) {
			t.Errorf("cut: %v", r.err)
		}
	}
}

// TestResponsesPersonalityRejects: the fake rejects what the API rejects;
// the provider's own requests pass (TestResponsesThreeStepSession).
func TestResponsesPersonalityRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"messages to /responses", "/responses", `{"model":"m","messages":[{"role":"user","content":"q"}]}`, 400, "Unsupported parameter: 'messages'"},
		{"output without its call", "/responses", `{"model":"m","store":false,"input":[{"role":"user","content":"q"},` +
			`{"type":"function_call_output","call_id":"call_9","output":"x"}]}`, 400, "No tool call found for function call output with call_id call_9."},
		{"item id under store false", "/responses", `{"model":"m","store":false,"input":[{"role":"user","content":"q"},` +
			`{"type":"reasoning","id":"rs_1","summary":[]}]}`, 404, "Item with id 'rs_1' not found."},
	} {
		srv := llmtest.NewResponsesServer(t)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+tc.path, bytes.NewReader([]byte(tc.body)))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Message, Type string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || body.Error.Type != "invalid_request_error" || !strings.Contains(body.Error.Message, tc.want) {
			t.Errorf("%s: %d %+v, want %d %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
	}
}

// TestResponsesCachedTokens: OpenAI's automatic caching reads the earlier
// prefix; the usage's cached_tokens reach Usage.CachedInputTokens.
func TestResponsesCachedTokens(t *testing.T) {
	t.Parallel()
	var script []llmtest.ResponsesStep
	for i := range 4 {
		script = append(script, rturn(llmtest.ResponsesTurn{ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: fmt.Sprintf(`{"path":"f%d"}`, i)}}}))
	}
	script = append(script, rturn(llmtest.ResponsesTurn{Text: "Done."}))
	srv := llmtest.NewResponsesServer(t, script...)
	steps := wireSession(t, newResponses(t, srv), "gpt-5.1", agentSystem(), agentTools(), 5, func(llm.ToolCall) string { return "ok" })
	last := steps[4].finish.Usage
	if last == nil || last.CachedInputTokens == 0 || last.CachedInputTokens*10 < last.InputTokens*8 {
		t.Errorf("last step usage %+v, want most input cached", last)
	}
}
