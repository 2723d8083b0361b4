package llmtest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// ToolCall is a tool call in a scripted Turn.
type ToolCall struct {
	ID        string // "" : call_<n>
	Name      string
	Arguments string // JSON text, streamed in several fragments
	// ExtraContent is sent on the call's first delta (Gemini's
	// {"google":{"thought_signature":...}}).
	ExtraContent json.RawMessage
}

// Call is a ToolCall with a generated id.
func Call(name, arguments string) ToolCall { return ToolCall{Name: name, Arguments: arguments} }

// Usage is the usage a Turn reports.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
	ReasoningTokens  int
}

// Turn describes one streamed assistant reply.
type Turn struct {
	Model     string // "" : "llmtest-model"
	Reasoning string // streamed in delta.reasoning_content
	Text      string
	ToolCalls []ToolCall
	// FinishReason as sent: "" picks "tool_calls" when there are tool calls
	// and "stop" otherwise.
	FinishReason string
	// Usage is sent in a final chunk with empty choices; nil sends a usage
	// computed from the lengths of the parts.
	Usage *Usage
	// NoUsage sends no usage chunk at all.
	NoUsage bool
}

// Text is a reply that streams s and stops.
func Text(s string) Reply { return Turn{Text: s}.Reply() }

// ToolCalls is a reply that calls the given tools.
func ToolCalls(calls ...ToolCall) Reply { return Turn{ToolCalls: calls}.Reply() }

// Reply returns the turn as a 200 SSE reply.
func (t Turn) Reply() Reply { return Reply{Body: t.SSE()} }

// SSE returns the turn as an SSE body in the shape OpenAI streams it: a
// role chunk, reasoning and text split into small deltas, each tool call
// split across several deltas with index, id and name only in its first, a
// finish chunk, a usage chunk with empty choices, and [DONE].
func (t Turn) SSE() []byte {
	model := t.Model
	if model == "" {
		model = "llmtest-model"
	}
	w := sseWriter{model: model}
	w.delta(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, piece := range split(t.Reasoning) {
		w.delta(map[string]any{"reasoning_content": piece}, nil)
	}
	for _, piece := range split(t.Text) {
		w.delta(map[string]any{"content": piece}, nil)
	}
	for i, c := range t.ToolCalls {
		w.toolCall(i, c)
	}
	finish := t.FinishReason
	if finish == "" {
		finish = "stop"
		if len(t.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	w.delta(map[string]any{}, finish)
	if !t.NoUsage {
		w.usage(t.usage())
	}
	w.buf.WriteString("data: [DONE]\n\n")
	return w.buf.Bytes()
}

func (t Turn) usage() Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	out := (len(t.Text) + len(t.Reasoning) + 3) / 4
	for _, c := range t.ToolCalls {
		out += (len(c.Name) + len(c.Arguments) + 3) / 4
	}
	return Usage{PromptTokens: 100, CompletionTokens: out + 1, ReasoningTokens: (len(t.Reasoning) + 3) / 4}
}

type sseWriter struct {
	model string
	buf   bytes.Buffer
}

func (w *sseWriter) chunk(choices []any, usage any) {
	c := map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1760000000,
		"model": w.model, "choices": choices, "usage": usage,
	}
	b, _ := json.Marshal(c)
	w.buf.WriteString("data: ")
	w.buf.Write(b)
	w.buf.WriteString("\n\n")
}

func (w *sseWriter) delta(d map[string]any, finish any) {
	w.chunk([]any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}, nil)
}

func (w *sseWriter) toolCall(i int, c ToolCall) {
	id := c.ID
	if id == "" {
		id = "call_" + strconv.Itoa(i+1)
	}
	frags := splitN(c.Arguments, 3)
	first := map[string]any{
		"index": i, "id": id, "type": "function",
		"function": map[string]any{"name": c.Name, "arguments": ""},
	}
	if len(c.ExtraContent) > 0 {
		first["extra_content"] = c.ExtraContent
	}
	w.delta(map[string]any{"tool_calls": []any{first}}, nil)
	for _, f := range frags {
		w.delta(map[string]any{"tool_calls": []any{
			map[string]any{"index": i, "function": map[string]any{"arguments": f}},
		}}, nil)
	}
}

func (w *sseWriter) usage(u Usage) {
	m := map[string]any{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens":              u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
	}
	w.chunk([]any{}, m)
}

// split cuts s after each space, keeping the spaces (word-sized deltas).
func split(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// splitN cuts s into up to n pieces of about equal size, on rune boundaries.
func splitN(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	size := (len(r) + n - 1) / n
	var out []string
	for len(r) > 0 {
		k := min(size, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
