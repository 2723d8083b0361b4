package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// Responses stream events for the cases below: a created response, a
// message item with text, a function_call item, and the terminal event.
const (
	respCreated  = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-x","output":[]}}`
	respMsgAdded = `{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}`
)

func respText(s string) string {
	return `{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":` + quote(s) + `}`
}

// TestResponsesErrorEvents: the error event in its documented flat form
// and in the nested form the API also sends; the class comes from the
// error's code or type wherever they sit.
func TestResponsesErrorEvents(t *testing.T) {
	t.Parallel()
	cases := []nativeCase{
		{name: "flat server_error", source: "OpenAI API reference, responses-streaming/error: {type, code, message, param, sequence_number}",
			reply: sseEvents(respCreated, respMsgAdded, respText("Hal"), `{"type":"error","code":"server_error","message":"Something went wrong","param":null,"sequence_number":3}`),
			want:  replyView{Text: "Hal", Class: llm.ClassRetryable}},
		{name: "flat context_length_exceeded", source: "OpenAI API reference, responses-streaming/error, with the code of an overflow",
			reply: sseEvents(respCreated, `{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input","sequence_number":1}`),
			want:  replyView{Class: llm.ClassContextOverflow}},
		{name: "nested out of credits", source: "https://github.com/Effect-TS/effect/pull/7262 (captured event: type insufficient_quota, code credit_balance_exhausted)",
			reply: sseEvents(respCreated, `{"type":"error","error":{"type":"insufficient_quota","code":"credit_balance_exhausted","message":"You have no credits remaining. Add credits to continue using the API.","param":null},"sequence_number":2}`),
			want:  replyView{Class: llm.ClassFatal}},
		{name: "nested too many requests", source: "https://github.com/openai/openai-dotnet/issues/881 (nested type and code too_many_requests)",
			reply: sseEvents(respCreated, `{"type":"error","sequence_number":2,"error":{"type":"too_many_requests","code":"too_many_requests","message":"Too Many Requests. Please try again in 3s.","param":null}}`),
			want:  replyView{Class: llm.ClassRetryable, RetryAfter: 3e9}},
		{name: "nested overflow", source: "nested form (openai/openai-dotnet#881) carrying the overflow code of the flat form",
			reply: sseEvents(respCreated, `{"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"},"sequence_number":2}`),
			want:  replyView{Class: llm.ClassContextOverflow}},
		{name: "nested null code", source: "https://github.com/vercel/ai/pull/20022 (service_unavailable_error with code null)",
			reply: sseEvents(respCreated, `{"type":"error","error":{"type":"service_unavailable_error","code":null,"message":"Unable to verify model access right now. Please retry.","param":null},"sequence_number":2}`),
			want:  replyView{Class: llm.ClassRetryable}},
	}
	runNativeCases(t, llm.NewResponses, cases)
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
