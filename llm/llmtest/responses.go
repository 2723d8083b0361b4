package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ResponsesTurn describes one streamed Responses reply, in the event
// sequence of OpenAI's streaming reference (platform.openai.com,
// "Streaming events"): response.created and .in_progress; per output item
// response.output_item.added, its deltas and .done events, and
// response.output_item.done; then response.completed (or .incomplete, or
// .failed). Every event carries a sequence_number.
type ResponsesTurn struct {
	Model string // "" : "gpt-5.1-codex"
	// Reasoning is streamed as a reasoning summary; the reasoning item
	// carries EncryptedContent ("" : made up from the summary).
	Reasoning        string
	EncryptedContent string
	Text             string
	ToolCalls        []ToolCall // call ids "" : call_<n>
	// Incomplete, when set, ends with response.incomplete and this
	// incomplete_details.reason ("max_output_tokens", "content_filter").
	Incomplete string
	// FailedCode, when set, ends with response.failed and this error code.
	FailedCode string
	// Usage as reported; the server fills it by its cache rule.
	Usage ResponsesUsage
	// CutBeforeEnd leaves out the terminal event.
	CutBeforeEnd bool
}

// ResponsesUsage is the usage of a Responses reply; InputTokens includes
// CachedTokens.
type ResponsesUsage struct {
	InputTokens     int
	CachedTokens    int
	OutputTokens    int
	ReasoningTokens int
}

// Reply returns the turn as a 200 SSE reply.
func (t ResponsesTurn) Reply() Reply { return Reply{Body: t.SSE()} }

// SSE returns the turn as an SSE body.
func (t ResponsesTurn) SSE() []byte {
	w := &responsesStream{model: cmp.Or(t.Model, "gpt-5.1-codex")}
	w.ev("response.created", map[string]any{"response": w.resp("in_progress", []any{})})
	w.ev("response.in_progress", map[string]any{"response": w.resp("in_progress", []any{})})
	if t.Reasoning != "" {
		w.reasoning(t.Reasoning, t.EncryptedContent)
	}
	if t.Text != "" {
		w.message(t.Text)
	}
	for i, c := range t.ToolCalls {
		callID := c.ID
		if callID == "" {
			callID = "call_llmtest" + strconv.Itoa(i+1)
		}
		w.call(callID, c.Name, c.Arguments)
	}
	if t.CutBeforeEnd {
		return []byte(w.b.String())
	}
	w.finish(t)
	return []byte(w.b.String())
}

// responsesStream writes one Responses API event stream: its events
// numbered in order and the output items so far.
type responsesStream struct {
	b      strings.Builder
	model  string
	seq    int
	index  int
	output []any
}

// ev writes one event of type typ with the fields of v.
func (w *responsesStream) ev(typ string, v map[string]any) {
	v["type"] = typ
	v["sequence_number"] = w.seq
	w.seq++
	data, _ := json.Marshal(v)
	fmt.Fprintf(&w.b, "event: %s\ndata: %s\n\n", typ, data)
}

// resp is the response object with the given status and output.
func (w *responsesStream) resp(status string, output []any) map[string]any {
	return map[string]any{"id": "resp_llmtest", "object": "response", "model": w.model, "status": status, "output": output, "store": false}
}

// done closes the current output item and moves to the next index.
func (w *responsesStream) done(item map[string]any) {
	w.ev("response.output_item.done", map[string]any{"output_index": w.index, "item": item})
	w.output = append(w.output, item)
	w.index++
}

// reasoning writes a reasoning item with its summary and encrypted content.
func (w *responsesStream) reasoning(text, enc string) {
	id, index := "rs_llmtest"+strconv.Itoa(w.index), w.index
	if enc == "" {
		enc = "gAAAAB" + strconv.Itoa(len(text)) + "llmtestencrypted"
	}
	at := func(v map[string]any) map[string]any {
		v["item_id"], v["output_index"], v["summary_index"] = id, index, 0
		return v
	}
	w.ev("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "reasoning", "id": id, "summary": []any{}}})
	w.ev("response.reasoning_summary_part.added", at(map[string]any{"part": map[string]any{"type": "summary_text", "text": ""}}))
	for _, p := range pieces(text, 3) {
		w.ev("response.reasoning_summary_text.delta", at(map[string]any{"delta": p}))
	}
	w.ev("response.reasoning_summary_text.done", at(map[string]any{"text": text}))
	w.ev("response.reasoning_summary_part.done", at(map[string]any{"part": map[string]any{"type": "summary_text", "text": text}}))
	w.done(map[string]any{"type": "reasoning", "id": id, "summary": []any{map[string]any{"type": "summary_text", "text": text}}, "encrypted_content": enc})
}

// message writes an assistant message item holding text.
func (w *responsesStream) message(text string) {
	id, index := "msg_llmtest"+strconv.Itoa(w.index), w.index
	at := func(v map[string]any) map[string]any {
		v["item_id"], v["output_index"], v["content_index"] = id, index, 0
		return v
	}
	w.ev("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []any{}}})
	w.ev("response.content_part.added", at(map[string]any{"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
	for _, p := range pieces(text, 3) {
		w.ev("response.output_text.delta", at(map[string]any{"delta": p}))
	}
	w.ev("response.output_text.done", at(map[string]any{"text": text}))
	part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	w.ev("response.content_part.done", at(map[string]any{"part": part}))
	w.done(map[string]any{"type": "message", "id": id, "status": "completed", "role": "assistant", "content": []any{part}})
}

// call writes a function_call item whose arguments arrive in pieces.
func (w *responsesStream) call(callID, name, args string) {
	id, index := "fc_llmtest"+strconv.Itoa(w.index), w.index
	w.ev("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name, "arguments": "", "status": "in_progress"}})
	for _, p := range pieces(args, 3) {
		w.ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": index, "delta": p})
	}
	w.ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": index, "arguments": args})
	w.done(map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name, "arguments": args, "status": "completed"})
}

// finish writes the terminal event: failed, incomplete or completed.
func (w *responsesStream) finish(t ResponsesTurn) {
	u := t.Usage
	if u.OutputTokens == 0 {
		u.OutputTokens = max(1, (len(t.Reasoning)+len(t.Text)+argsLen(t.ToolCalls))/4)
	}
	usage := map[string]any{"input_tokens": u.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": u.CachedTokens},
		"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
		"total_tokens": u.InputTokens + u.OutputTokens}
	switch {
	case t.FailedCode != "":
		r := w.resp("failed", w.output)
		r["error"] = map[string]any{"code": t.FailedCode, "message": "The model failed: " + t.FailedCode}
		w.ev("response.failed", map[string]any{"response": r})
	case t.Incomplete != "":
		r := w.resp("incomplete", w.output)
		r["incomplete_details"] = map[string]any{"reason": t.Incomplete}
		r["usage"] = usage
		w.ev("response.incomplete", map[string]any{"response": r})
	default:
		r := w.resp("completed", w.output)
		r["usage"] = usage
		w.ev("response.completed", map[string]any{"response": r})
	}
}

// OpenAIError is an OpenAI error body: {"error": {"message", "type",
// "param", "code"}}.
func OpenAIError(status int, typ, param, code, msg string) Reply {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	return jsonReply(status, map[string]any{"error": e})
}
