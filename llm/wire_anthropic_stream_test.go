package llm_test

import (
	"strconv"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// Messages stream events for the cases below.
const (
	anthMsgStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	anthPing     = `{"type":"ping"}`
	anthMsgStop  = `{"type":"message_stop"}`
)

// anthText is a whole text block at index i.
func anthText(i int, s string) []string {
	n := strconv.Itoa(i)
	return []string{`{"type":"content_block_start","index":` + n + `,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":` + n + `,"delta":{"type":"text_delta","text":` + quote(s) + `}}`,
		`{"type":"content_block_stop","index":` + n + `}`}
}

// anthTool is a tool_use block at index i whose input arrives in the
// given partial_json fragments; stop leaves out content_block_stop when
// false.
func anthTool(i int, id, name string, stop bool, frags ...string) []string {
	n := strconv.Itoa(i)
	out := []string{`{"type":"content_block_start","index":` + n + `,"content_block":{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}}`}
	for _, f := range frags {
		out = append(out, `{"type":"content_block_delta","index":`+n+`,"delta":{"type":"input_json_delta","partial_json":`+quote(f)+`}}`)
	}
	if stop {
		out = append(out, `{"type":"content_block_stop","index":`+n+`}`)
	}
	return out
}

func anthDelta(stop string) string {
	return `{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":5}}`
}

// events flattens strings and string slices into one list.
func events(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

// TestAnthropicStreamShapes: the Messages stream's documented shapes
// (docs.claude.com, "Streaming Messages") and its faults, through the
// anthropic provider.
func TestAnthropicStreamShapes(t *testing.T) {
	t.Parallel()
	u := &llm.Usage{InputTokens: 10, OutputTokens: 5}
	thinking := []string{`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Read the test first."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`,
		`{"type":"content_block_stop","index":0}`}
	cases := []nativeCase{
		{name: "pings between events", source: "Streaming Messages: event: ping may come at any point",
			reply: sseEvents(events(anthMsgStart, anthPing, anthText(0, "Hallo"), anthPing, anthDelta("end_turn"), anthPing, anthMsgStop)...),
			want:  replyView{Text: "Hallo", Finish: llm.FinishStop, Usage: u}},
		{name: "overloaded_error after text", source: "Streaming Messages, error events: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}; https://github.com/BerriAI/litellm/issues/4562",
			reply: sseEvents(events(anthMsgStart, anthText(0, "Hal")[:2], `{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}`)...),
			want:  replyView{Text: "Hal", Class: llm.ClassRetryable}},
		{name: "api_error after a partial tool input drops the call", source: "https://github.com/BerriAI/litellm/issues/4562 (api_error mid-stream)",
			reply: sseEvents(events(anthMsgStart, anthTool(0, "toolu_1", "read", false, `{"path":`), `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)...),
			want:  replyView{Class: llm.ClassRetryable}},
		{name: "input_json_delta split anywhere, a first empty fragment", source: "Streaming Messages: input_json_delta partial_json, the first often empty",
			reply: sseEvents(events(anthMsgStart, anthTool(0, "toolu_1", "read", true, "", `{"pa`, `th": "a.`, `go"}`), anthDelta("tool_use"), anthMsgStop)...),
			want:  replyView{Finish: llm.FinishToolCalls, Usage: u, Calls: []string{`read {"path":"a.go"}`}}},
		{name: "tool without input", source: "Streaming Messages: a tool_use block with no input_json_delta has input {}",
			reply: sseEvents(events(anthMsgStart, anthTool(0, "toolu_1", "list", true), anthDelta("tool_use"), anthMsgStop)...),
			want:  replyView{Finish: llm.FinishToolCalls, Usage: u, Calls: []string{`list {}`}}},
		{name: "thinking with its signature, then text", source: "Extended thinking: thinking_delta, then signature_delta before content_block_stop",
			reply: sseEvents(events(anthMsgStart, thinking, anthText(1, "Hallo"), anthDelta("end_turn"), anthMsgStop)...),
			want:  replyView{Text: "Hallo", Reasoning: "Read the test first.", Finish: llm.FinishStop, Usage: u}},
		{name: "redacted_thinking is kept, not shown", source: "Extended thinking: redacted_thinking blocks carry data only",
			reply: sseEvents(events(anthMsgStart, `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}`,
				`{"type":"content_block_stop","index":0}`, anthText(1, "Hallo"), anthDelta("end_turn"), anthMsgStop)...),
			want: replyView{Text: "Hallo", Finish: llm.FinishStop, Usage: u}},
		{name: "refusal", source: "Handling stop reasons: refusal",
			reply: sseEvents(events(anthMsgStart, anthText(0, "I can't help with that."), anthDelta("refusal"), anthMsgStop)...),
			want:  replyView{Text: "I can't help with that.", Finish: llm.FinishContentFilter, Usage: u}},
		{name: "max_tokens inside a tool input", source: "Handling stop reasons: max_tokens can cut a tool_use block; the call is not run",
			reply: sseEvents(events(anthMsgStart, anthText(0, "Writing."), anthTool(1, "toolu_1", "write", true, `{"path":"a","content":"abc`), anthDelta("max_tokens"), anthMsgStop)...),
			want:  replyView{Text: "Writing.", Finish: llm.FinishLength, Usage: u, Calls: []string{`write !{"path":"a","content":"abc`}}},
		{name: "model_context_window_exceeded", source: "Handling stop reasons: model_context_window_exceeded",
			reply: sseEvents(events(anthMsgStart, anthText(0, "Long"), anthDelta("model_context_window_exceeded"), anthMsgStop)...),
			want:  replyView{Text: "Long", Finish: llm.FinishLength, Usage: u}},
		{name: "pause_turn", source: "Handling stop reasons: pause_turn",
			reply: sseEvents(events(anthMsgStart, anthText(0, "Searching"), anthDelta("pause_turn"), anthMsgStop)...),
			want:  replyView{Text: "Searching", Finish: llm.FinishPaused, Usage: u}},
		{name: "an oddly typed usage keeps its message_delta", source: "llm-streams README chunk decoding rule applied to the Messages stream (made-up value)",
			reply: sseEvents(events(anthMsgStart, anthText(0, "Hallo"), `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":"n/a"}`, anthMsgStop)...),
			want:  replyView{Text: "Hallo", Finish: llm.FinishStop, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 1}}},
		{name: "cut after the last content_block_stop", source: "https://github.com/maximhq/bifrost/issues/6081 (no message_delta, no message_stop)",
			reply: sseEvents(events(anthMsgStart, anthText(0, "Hallo"))...),
			want:  replyView{Text: "Hallo", Class: llm.ClassRetryable}},
		{name: "cut between message_delta and message_stop", source: "https://github.com/charmbracelet/fantasy/pull/245 (message_stop is required)",
			reply: sseEvents(events(anthMsgStart, anthText(0, "Hallo"), anthDelta("end_turn"))...),
			want:  replyView{Text: "Hallo", Class: llm.ClassRetryable}},
	}
	runNativeCases(t, llm.NewAnthropic, cases)
}
