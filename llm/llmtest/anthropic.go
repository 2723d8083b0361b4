package llmtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// AnthropicTurn describes one streamed Messages reply, in the event
// sequence of Anthropic's streaming docs (platform.claude.com, "Streaming
// Messages"): message_start, per block content_block_start, deltas and
// content_block_stop, message_delta with the stop_reason and usage, and
// message_stop, with a ping after the first block starts.
type AnthropicTurn struct {
	Model string // "" : "claude-sonnet-4-5"
	// Thinking is streamed in a thinking block signed with Signature
	// ("" : ThinkingSignature, which the personality checks); RedactedThinking adds a
	// redacted_thinking block with that data after it.
	Thinking         string
	Signature        string
	RedactedThinking string
	Text             string
	ToolCalls        []ToolCall // ids "" : toolu_<n>
	// StopReason as sent: "" picks tool_use with tool calls, else end_turn.
	StopReason string
	// Usage as reported; the server fills it from its cache rule when it
	// serves the turn (AnthropicServer).
	Usage AnthropicUsage
	// CutBeforeStop leaves out message_delta and message_stop (a cut stream).
	CutBeforeStop bool
}

// AnthropicUsage is the usage of a Messages reply. InputTokens leaves out
// cache reads and writes, as the API reports it.
type AnthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// Reply returns the turn as a 200 SSE reply.
func (t AnthropicTurn) Reply() Reply { return Reply{Body: t.SSE()} }

// SSE returns the turn as an SSE body.
func (t AnthropicTurn) SSE() []byte {
	model := t.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	var b strings.Builder
	ev := func(name string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
	}
	start := t.Usage
	start.OutputTokens = 1
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_01llmtest", "type": "message", "role": "assistant", "content": []any{}, "model": model,
		"stop_reason": nil, "stop_sequence": nil, "usage": start}})
	index := 0
	block := func(cb map[string]any, deltas []map[string]any) {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": cb})
		if index == 0 {
			ev("ping", map[string]any{"type": "ping"})
		}
		for _, d := range deltas {
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if t.Thinking != "" {
		sig := t.Signature
		if sig == "" {
			sig = ThinkingSignature(t.Thinking)
		}
		var ds []map[string]any
		for _, p := range pieces(t.Thinking, 3) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": p})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": sig})
		block(map[string]any{"type": "thinking", "thinking": ""}, ds)
	}
	if t.RedactedThinking != "" {
		block(map[string]any{"type": "redacted_thinking", "data": t.RedactedThinking}, nil)
	}
	if t.Text != "" {
		var ds []map[string]any
		for _, p := range pieces(t.Text, 3) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": p})
		}
		block(map[string]any{"type": "text", "text": ""}, ds)
	}
	for i, c := range t.ToolCalls {
		id := c.ID
		if id == "" {
			id = "toolu_0" + strconv.Itoa(i+1) + "llmtest"
		}
		ds := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
		for _, p := range pieces(c.Arguments, 3) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		block(map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": map[string]any{}}, ds)
	}
	if t.CutBeforeStop {
		return []byte(b.String())
	}
	stop := t.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(t.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	out := t.Usage.OutputTokens
	if out == 0 {
		out = max(1, (len(t.Thinking)+len(t.Text)+argsLen(t.ToolCalls))/4)
	}
	ev("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}})
	ev("message_stop", map[string]any{"type": "message_stop"})
	return []byte(b.String())
}

// signaturePrefix starts the fake's own thinking signatures.
const signaturePrefix = "EqllmsigQ"

// ThinkingSignature is the fake's signature of a thinking text: like the
// API's, it is valid only for that exact text.
func ThinkingSignature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return signaturePrefix + base64.RawURLEncoding.EncodeToString(sum[:18])
}

func argsLen(calls []ToolCall) int {
	n := 0
	for _, c := range calls {
		n += len(c.Arguments)
	}
	return n
}

// pieces splits s into about n pieces on rune boundaries.
func pieces(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	size := max(1, (len(r)+n-1)/n)
	var out []string
	for i := 0; i < len(r); i += size {
		out = append(out, string(r[i:min(i+size, len(r))]))
	}
	return out
}

// AnthropicError is an Anthropic error body: {"type":"error","error":
// {"type": typ, "message": msg}}.
func AnthropicError(status int, typ, msg string) Reply {
	return jsonReply(status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// AnthropicOverloaded is the 529 overloaded_error reply.
func AnthropicOverloaded() Reply { return AnthropicError(529, "overloaded_error", "Overloaded") }
