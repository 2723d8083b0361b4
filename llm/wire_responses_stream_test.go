package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// Responses stream events for the cases below: a created response, a
// message item with text, a function_call item, and the terminal event.
const (
	respCreated  = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-x","output":[]}}`
	respMsgAdded = `{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}`
	respFCAdded  = `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"","status":"in_progress"}}`
)

func respText(s string) string {
	return `{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":` + quote(s) + `}`
}

func respMsgDone(s string) string {
	return `{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":` + quote(s) + `,"annotations":[]}]}}`
}

func respArgs(s string) string {
	return `{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_1","delta":` + quote(s) + `}`
}

func respArgsDone(s string) string {
	return `{"type":"response.function_call_arguments.done","output_index":1,"item_id":"fc_1","arguments":` + quote(s) + `}`
}

func respFCDone(args string) string {
	return `{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":` + quote(args) + `,"status":"completed"}}`
}

// respEnd is the terminal event of the given status; extra adds members
// to the response (incomplete_details, output).
func respEnd(status, extra string) string {
	return `{"type":"response.` + status + `","response":{"id":"resp_1","status":"` + status + `","model":"gpt-x"` + extra +
		`,"usage":{"input_tokens":10,"output_tokens":5}}}`
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

// TestResponsesWholeItems: an item's content comes from the first place it
// appears (deltas, done events, the terminal response's output) and is
// shown once. Gateways that translate other APIs send some items only
// whole; a reader of deltas alone loses them.
func TestResponsesWholeItems(t *testing.T) {
	t.Parallel()
	u := &llm.Usage{InputTokens: 10, OutputTokens: 5}
	text := replyView{Text: "Hallo", Finish: llm.FinishStop, Usage: u}
	call := replyView{Finish: llm.FinishToolCalls, Usage: u, Calls: []string{`read {"path":"a.go"}`}}
	snapshot := `,"output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hallo","annotations":[]}]},` +
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.go\"}","status":"completed"}]`
	cases := []nativeCase{
		{name: "deltas, then every done event and the snapshot: shown once", source: "OpenAI Responses streaming guide: deltas, then .done events, then response.completed with the whole output",
			reply: sseEvents(respCreated, respMsgAdded, respText("Hal"), respText("lo"), `{"type":"response.output_text.done","output_index":0,"item_id":"msg_1","content_index":0,"text":"Hallo"}`,
				respMsgDone("Hallo"), respFCAdded, respArgs(`{"path":`), respArgs(`"a.go"}`), respArgsDone(`{"path":"a.go"}`), respFCDone(`{"path":"a.go"}`), respEnd("completed", snapshot)),
			want: replyView{Text: "Hallo", Finish: llm.FinishToolCalls, Usage: u, Calls: []string{`read {"path":"a.go"}`}}},
		{name: "message text only in output_text.done", source: "https://github.com/lidge-jun/opencodex/pull/4652 (done-only Responses events from a gateway)",
			reply: sseEvents(respCreated, respMsgAdded, `{"type":"response.output_text.done","output_index":0,"item_id":"msg_1","content_index":0,"text":"Hallo"}`, respEnd("completed", "")),
			want:  text},
		{name: "message text only in output_item.done", source: "https://github.com/lidge-jun/opencodex/pull/4652",
			reply: sseEvents(respCreated, respMsgAdded, respMsgDone("Hallo"), respEnd("completed", "")),
			want:  text},
		{name: "refusal only in output_item.done", source: "OpenAI Responses output content part {type: refusal, refusal}",
			reply: sseEvents(respCreated, respMsgAdded, `{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}]}}`, respEnd("completed", "")),
			want:  replyView{Text: "I can't help with that.", Finish: llm.FinishStop, Usage: u}},
		{name: "call only in output_item.done", source: "https://github.com/lidge-jun/opencodex/pull/4652 (function_call item never added, no argument deltas)",
			reply: sseEvents(respCreated, respFCDone(`{"path":"a.go"}`), respEnd("completed", "")),
			want:  call},
		{name: "arguments only in function_call_arguments.done", source: "OpenAI Responses streaming: function_call_arguments.done carries the whole arguments; a gateway that sends no output_item.done",
			reply: sseEvents(respCreated, respFCAdded, respArgsDone(`{"path":"a.go"}`), respEnd("completed", "")),
			want:  call},
		{name: "arguments.done corrects the deltas", source: "OpenAI Responses streaming: the .done event carries the final arguments",
			reply: sseEvents(respCreated, respFCAdded, respArgs(`{"path":"a.`), respArgsDone(`{"path":"a.go"}`), respEnd("completed", "")),
			want:  call},
		{name: "item done without arguments keeps the deltas", source: "output_item.done of a gateway that leaves arguments empty (lidge-jun/opencodex#4652 shapes)",
			reply: sseEvents(respCreated, respFCAdded, respArgs(`{"path":"a.go"}`), respFCDone(""), respEnd("completed", "")),
			want:  call},
		{name: "everything only in the terminal response", source: "https://github.com/NVIDIA-NeMo/Switchyard/pull/777 (recover Responses terminal snapshot output)",
			reply: sseEvents(respCreated, respEnd("completed", snapshot)),
			want:  replyView{Text: "Hallo", Finish: llm.FinishToolCalls, Usage: u, Calls: []string{`read {"path":"a.go"}`}}},
	}
	runNativeCases(t, llm.NewResponses, cases)
}

// TestResponsesStreamShapes: the Responses stream's terminal events,
// reasoning summaries and refusals (OpenAI API reference,
// responses-streaming), through the responses provider.
func TestResponsesStreamShapes(t *testing.T) {
	t.Parallel()
	u := &llm.Usage{InputTokens: 10, OutputTokens: 5}
	reasoning := []string{`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}`,
		`{"type":"response.reasoning_summary_part.added","output_index":0,"item_id":"rs_1","summary_index":0,"part":{"type":"summary_text","text":""}}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"item_id":"rs_1","summary_index":0,"delta":"Read it."}`,
		`{"type":"response.reasoning_summary_part.added","output_index":0,"item_id":"rs_1","summary_index":1,"part":{"type":"summary_text","text":""}}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"item_id":"rs_1","summary_index":1,"delta":"Then fix it."}`}
	cases := []nativeCase{
		{name: "response.failed with server_error after text", source: "responses-streaming/response/failed: response.error {code, message}",
			reply: sseEvents(respCreated, respMsgAdded, respText("Hal"), `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."}}}`),
			want:  replyView{Text: "Hal", Class: llm.ClassRetryable}},
		{name: "response.failed with rate_limit_exceeded waits", source: "responses-streaming/response/failed with the rate-limit code and its message",
			reply: sseEvents(respCreated, `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 2s."}}}`),
			want:  replyView{Class: llm.ClassRetryable, RetryAfter: 2e9}},
		{name: "response.failed with context_length_exceeded compacts", source: "responses-streaming/response/failed with the overflow code",
			reply: sseEvents(respCreated, `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}`),
			want:  replyView{Class: llm.ClassContextOverflow}},
		{name: "response.failed with invalid_prompt is fatal", source: "OpenAI API reference, the response object: error.code invalid_prompt",
			reply: sseEvents(respCreated, `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"invalid_prompt","message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy."}}}`),
			want:  replyView{Class: llm.ClassFatal}},
		{name: "response.failed with an image code is fatal", source: "OpenAI API reference, the response object: error.code image_content_policy_violation",
			reply: sseEvents(respCreated, `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"image_content_policy_violation","message":"The image violates the content policy."}}}`),
			want:  replyView{Class: llm.ClassFatal}},
		{name: "response.failed with vector_store_timeout stays retryable", source: "OpenAI API reference, the response object: error.code vector_store_timeout",
			reply: sseEvents(respCreated, `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"vector_store_timeout","message":"Vector store timed out."}}}`),
			want:  replyView{Class: llm.ClassRetryable}},
		{name: "response.failed without an error", source: "responses-streaming/response/failed with error null (a gateway's)",
			reply: sseEvents(respCreated, `{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":null}}`),
			want:  replyView{Class: llm.ClassRetryable}},
		{name: "response.incomplete at max_output_tokens", source: "responses-streaming/response/incomplete: incomplete_details.reason",
			reply: sseEvents(respCreated, respMsgAdded, respText("Hal"), respEnd("incomplete", `,"incomplete_details":{"reason":"max_output_tokens"}`)),
			want:  replyView{Text: "Hal", Finish: llm.FinishLength, Usage: u}},
		{name: "response.incomplete by the content filter", source: "responses-streaming/response/incomplete: content_filter",
			reply: sseEvents(respCreated, respMsgAdded, respText("Hal"), respEnd("incomplete", `,"incomplete_details":{"reason":"content_filter"}`)),
			want:  replyView{Text: "Hal", Finish: llm.FinishContentFilter, Usage: u}},
		{name: "reasoning summary parts", source: "responses-streaming: reasoning_summary_part.added, reasoning_summary_text.delta",
			reply: sseEvents(append(append([]string{respCreated}, reasoning...), respMsgAdded, respText("Done."), respEnd("completed", ""))...),
			want:  replyView{Text: "Done.", Reasoning: "Read it.\n\nThen fix it.", Finish: llm.FinishStop, Usage: u}},
		{name: "refusal deltas", source: "responses-streaming/response/refusal/delta",
			reply: sseEvents(respCreated, respMsgAdded, `{"type":"response.refusal.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"I can't help with that."}`,
				`{"type":"response.refusal.done","output_index":0,"item_id":"msg_1","content_index":0,"refusal":"I can't help with that."}`, respEnd("completed", "")),
			want: replyView{Text: "I can't help with that.", Finish: llm.FinishStop, Usage: u}},
		{name: "cut before the terminal event", source: "a stream that ends without response.completed is incomplete",
			reply: sseEvents(respCreated, respMsgAdded, respText("Hal")),
			want:  replyView{Text: "Hal", Class: llm.ClassRetryable}},
		{name: "[DONE] after response.completed", source: "gateways that end a Responses stream with data: [DONE]",
			reply: llmtest.SSE(sseEventsText(respCreated, respMsgAdded, respText("Hal"), respEnd("completed", "")) + "data: [DONE]\n\n"),
			want:  replyView{Text: "Hal", Finish: llm.FinishStop, Usage: u}},
	}
	runNativeCases(t, llm.NewResponses, cases)
}
