package llmtest

import (
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
	model := t.Model
	if model == "" {
		model = "gpt-5.1-codex"
	}
	var b strings.Builder
	seq := 0
	ev := func(typ string, v map[string]any) {
		v["type"] = typ
		v["sequence_number"] = seq
		seq++
		data, _ := json.Marshal(v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data)
	}
	resp := func(status string, output []any) map[string]any {
		return map[string]any{"id": "resp_llmtest", "object": "response", "model": model, "status": status, "output": output, "store": false}
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	var output []any
	index := 0
	if t.Reasoning != "" {
		id := "rs_llmtest" + strconv.Itoa(index)
		enc := t.EncryptedContent
		if enc == "" {
			enc = "gAAAAB" + strconv.Itoa(len(t.Reasoning)) + "llmtestencrypted"
		}
		ev("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "reasoning", "id": id, "summary": []any{}}})
		ev("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": index, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
		for _, p := range pieces(t.Reasoning, 3) {
			ev("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": index, "summary_index": 0, "delta": p})
		}
		ev("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": index, "summary_index": 0, "text": t.Reasoning})
		ev("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": index, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": t.Reasoning}})
		item := map[string]any{"type": "reasoning", "id": id, "summary": []any{map[string]any{"type": "summary_text", "text": t.Reasoning}}, "encrypted_content": enc}
		ev("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}
	if t.Text != "" {
		id := "msg_llmtest" + strconv.Itoa(index)
		ev("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, p := range pieces(t.Text, 3) {
			ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "delta": p})
		}
		ev("response.output_text.done", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "text": t.Text})
		part := map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}
		ev("response.content_part.done", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "part": part})
		item := map[string]any{"type": "message", "id": id, "status": "completed", "role": "assistant", "content": []any{part}}
		ev("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}
	for i, c := range t.ToolCalls {
		callID := c.ID
		if callID == "" {
			callID = "call_llmtest" + strconv.Itoa(i+1)
		}
		id := "fc_llmtest" + strconv.Itoa(index)
		ev("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": c.Name, "arguments": "", "status": "in_progress"}})
		for _, p := range pieces(c.Arguments, 3) {
			ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": index, "delta": p})
		}
		ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": index, "arguments": c.Arguments})
		item := map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": c.Name, "arguments": c.Arguments, "status": "completed"}
		ev("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}
	if t.CutBeforeEnd {
		return []byte(b.String())
	}
	u := t.Usage
	if u.OutputTokens == 0 {
		u.OutputTokens = max(1, (len(t.Reasoning)+len(t.Text)+argsLen(t.ToolCalls))/4)
	}
	usage := map[string]any{"input_tokens": u.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": u.CachedTokens},
		"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
		"total_tokens": u.InputTokens + u.OutputTokens}
	switch {
	case t.FailedCode != "":
		r := resp("failed", output)
		r["error"] = map[string]any{"code": t.FailedCode, "message": "The model failed: " + t.FailedCode}
		ev("response.failed", map[string]any{"response": r})
	case t.Incomplete != "":
		r := resp("incomplete", output)
		r["incomplete_details"] = map[string]any{"reason": t.Incomplete}
		r["usage"] = usage
		ev("response.incomplete", map[string]any{"response": r})
	default:
		r := resp("completed", output)
		r["usage"] = usage
		ev("response.completed", map[string]any{"response": r})
	}
	return []byte(b.String())
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
