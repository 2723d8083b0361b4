package llm_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// choiceChunk is a chunk with one choice at index that streams text (and
// ends with finishRaw when it is not "").
func choiceChunk(index int, text, finishRaw string) string {
	b, _ := json.Marshal(text)
	if finishRaw == "" {
		finishRaw = "null"
	}
	return `{"choices":[{"index":` + strconv.Itoa(index) + `,"delta":{"content":` + string(b) + `},"finish_reason":` + finishRaw + `}]}`
}

// TestReplyChoiceIndex: the runner asks for one choice. Indices that
// recur are other choices and are dropped; an index that never recurs and
// climbs with every chunk counts chunks, and all those chunks are the
// reply.
func TestReplyChoiceIndex(t *testing.T) {
	t.Parallel()
	text := func(s string) replyView { return replyView{Text: s, Finish: llm.FinishStop} }
	cases := []replyCase{
		{name: "index counts chunks from 0", source: "r3 case 79; https://github.com/microsoft/foundry-local/issues/263",
			reply: sse(choiceChunk(0, "a", ""), choiceChunk(1, "b", ""), choiceChunk(2, "c", ""), choiceChunk(3, "d", ""),
				choiceChunk(4, "e", ""), choiceChunk(5, "f", ""), choiceChunk(6, "", `"stop"`)),
			want: text("abcdef")},
		{name: "index counts chunks from 1", source: "sibling of r3 case 79: a one-based counter (https://github.com/microsoft/foundry-local/issues/144)",
			reply: sse(choiceChunk(1, "a", ""), choiceChunk(2, "b", ""), choiceChunk(3, "c", ""), choiceChunk(4, "", `"stop"`)),
			want:  text("abc")},
		{name: "short counted stream ends before the counter is sure", source: "sibling of r3 case 79: fewer chunks than the confirmation needs",
			reply: sse(choiceChunk(0, "a", ""), choiceChunk(1, "b", ""), choiceChunk(2, "", `"stop"`)),
			want:  text("ab")},
		{name: "counted stream cut without finish_reason, then [DONE]", source: "sibling of r3 case 79 with case 22 ([DONE] without a finish_reason)",
			reply: sse(choiceChunk(0, "a", ""), choiceChunk(1, "b", "")),
			want:  replyView{Text: "ab", Finish: llm.FinishUnknown}},
		{name: "counted chunks carry a tool call", source: "sibling of r3 case 79: Foundry Local tool calls (https://github.com/microsoft/foundry-local/issues/372)",
			reply: sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":""}}]}}]}`,
				`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a\"}"}}]}}]}`,
				`{"choices":[{"index":2,"delta":{},"finish_reason":"tool_calls"}]}`),
			tools: []string{"read"}, want: replyView{Finish: llm.FinishToolCalls, Calls: []string{`read {"path":"a"}`}}},
		{name: "n=2 interleaved keeps choice 0", source: "r3 case 72; https://github.com/BerriAI/litellm/issues/35793",
			reply: sse(choiceChunk(0, "A", ""), choiceChunk(1, "x", ""), choiceChunk(0, "B", ""), choiceChunk(1, "y", ""),
				choiceChunk(0, "", `"stop"`), choiceChunk(1, "", `"stop"`)),
			want: text("AB")},
		{name: "n=3 interleaved keeps choice 0", source: "sibling of r3 case 72: three choices recur after three chunks",
			reply: sse(choiceChunk(0, "A", ""), choiceChunk(1, "x", ""), choiceChunk(2, "y", ""), choiceChunk(0, "B", ""),
				choiceChunk(1, "x", ""), choiceChunk(2, "y", ""), choiceChunk(0, "", `"stop"`), choiceChunk(1, "", `"stop"`)),
			want: text("AB")},
		{name: "n=2 one choice after the other", source: "sibling of r3 case 72: a proxy that streams choice 1 after choice 0 ended",
			reply: sse(choiceChunk(0, "A", ""), choiceChunk(0, "B", `"stop"`), choiceChunk(1, "x", ""), choiceChunk(1, "y", ""),
				choiceChunk(1, "", `"stop"`)),
			want: text("AB")},
		{name: "n=2 with both choices in one chunk", source: "OpenAI chat.completion.chunk: choices can hold more than one element when n > 1",
			reply: sse(`{"choices":[{"index":0,"delta":{"content":"A"}},{"index":1,"delta":{"content":"x"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"B"},"finish_reason":"stop"},{"index":1,"delta":{"content":"y"},"finish_reason":"stop"}]}`),
			want: text("AB")},
		{name: "n=2 in one chunk, choice 1 listed first", source: "sibling of r3 case 72: choices are keyed by index, not by their place in the array",
			reply: sse(`{"choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"content":"A"}}]}`,
				`{"choices":[{"index":1,"delta":{"content":"y"},"finish_reason":"stop"},{"index":0,"delta":{"content":"B"},"finish_reason":"stop"}]}`),
			want: text("AB")},
	}
	runReplyCases(t, cases)
}

// TestReplyOddlyTypedMembers: a member of an unexpected type is read as
// absent, and the rest of its chunk still counts (llm-streams README,
// "Chunk decoding": decode leniently, case 15). The odd values are made
// up; before, one of them cost the whole chunk, text and usage included.
func TestReplyOddlyTypedMembers(t *testing.T) {
	t.Parallel()
	stop := finish(`"stop"`)
	cases := []replyCase{
		{name: "usage as a string beside the text", source: "llm-streams README, chunk decoding rule (made-up value)",
			reply: sse(`{"choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":"n/a"}`, stop),
			want:  replyView{Text: "Hi", Finish: llm.FinishStop}},
		{name: "tool_calls as an object beside the text", source: "llm-streams README, chunk decoding rule (made-up value)",
			reply: sse(`{"choices":[{"index":0,"delta":{"content":"Hi","tool_calls":{}}}]}`, stop),
			want:  replyView{Text: "Hi", Finish: llm.FinishStop}},
		{name: "choices as an object beside the usage", source: "llm-streams README, chunk decoding rule (made-up value)",
			reply: sse(content("Hi"), stop, `{"choices":{},"usage":{"prompt_tokens":3,"completion_tokens":1}}`),
			want:  replyView{Text: "Hi", Finish: llm.FinishStop, Usage: usage(3, 1)}},
	}
	runReplyCases(t, cases)
}
