package llm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestReplySSEFraming: event-stream framing a client must accept under the
// WHATWG rules (HTML, "Parsing an event stream"): a leading byte order
// mark, CRLF, LF or lone CR line ends, comments, "data:" with or without
// the space, data split over several lines, fields without a colon, and
// id, retry, event and unknown fields. Every variant carries the same
// reply.
func TestReplySSEFraming(t *testing.T) {
	t.Parallel()
	c1 := content("Hel")
	c2 := content("lo.")
	end := finish(`"stop"`)
	want := replyView{Text: "Hello.", Finish: llm.FinishStop}
	lf := "data: " + c1 + "\n\ndata: " + c2 + "\n\ndata: " + end + "\n\ndata: [DONE]\n\n"
	cases := []replyCase{
		{name: "utf-8 byte order mark before the first field", source: "WHATWG HTML event-stream parsing: one leading U+FEFF is ignored",
			reply: llmtest.SSE("\xEF\xBB\xBF" + lf), want: want},
		{name: "lone CR line ends", source: "WHATWG HTML event-stream grammar: end-of-line = CRLF / LF / CR",
			reply: llmtest.SSE(strings.ReplaceAll(lf, "\n", "\r")), want: want},
		{name: "CRLF and LF mixed", source: "WHATWG HTML event-stream grammar; https://github.com/sashabaranov/go-openai (CRLF bodies from ASP.NET servers)",
			reply: llmtest.SSE("data: " + c1 + "\r\n\r\ndata: " + c2 + "\n\r\ndata: " + end + "\r\r\ndata: [DONE]\r\n\r\n"), want: want},
		{name: "dashscope native framing: id, event, status comment, data without space", source: "DashScope SSE output (id:1 / event:result / :HTTP_STATUS/200 / data:{...})",
			reply: llmtest.SSE("id:1\nevent:result\n:HTTP_STATUS/200\ndata:" + c1 + "\n\nid:2\nevent:result\n:HTTP_STATUS/200\ndata:" + c2 +
				"\n\nid:3\nevent:result\n:HTTP_STATUS/200\ndata:" + end + "\n\n"), want: want},
		{name: "data over several lines with a comment between", source: "WHATWG HTML: each data line is appended to the data buffer; https://github.com/openai/openai-go/issues/227 (comments mid-stream)",
			reply: llmtest.SSE("data: {\"choices\":[{\"index\":0,\ndata:  \"delta\":{\"content\":\"Hel\"}}]}\n\n" +
				": OPENROUTER PROCESSING\n\ndata: " + c2 + "\n\ndata: " + end + "\n\ndata: [DONE]\n\n"), want: want},
		{name: "fields without a colon, retry, id and unknown fields", source: "WHATWG HTML: a line without a colon is a field name with an empty value; retry and id are not data",
			reply: llmtest.SSE("retry: 3000\nid: 41\nfoo: bar\ndata\n\nevent: message\ndata: " + c1 + "\nid\n\ndata: " + c2 + "\n\n" +
				"event\ndata: " + end + "\n\ndata: [DONE]\n\n"), want: want},
		{name: "anthropic-style ping events between chunks", source: "Anthropic streaming docs: event: ping with data {\"type\": \"ping\"}",
			reply: llmtest.SSE("event: ping\ndata: {\"type\": \"ping\"}\n\n" + lf), want: want},
	}
	runReplyCases(t, cases)
}

// TestReplySplitReads: the body arrives in two network reads split inside
// a multi-byte UTF-8 character, of text and of tool-call arguments. Lines
// are framed on bytes, so no character is cut (the fault of per-read
// decoders: api7/aisix#111, zeroclaw-labs/zeroclaw#4754).
func TestReplySplitReads(t *testing.T) {
	t.Parallel()
	text := "data: " + content("Grüße, 世界 🌍") + "\n\ndata: " + finish(`"stop"`) + "\n\ndata: [DONE]\n\n"
	call := "data: " + callChunk("", 0, "c1", "write", `{"text":"世界 🌍"}`) + "\n\ndata: " + finish(`"tool_calls"`) + "\n\ndata: [DONE]\n\n"
	inside := func(body, char string, k int) int { return strings.Index(body, char) + k } // k bytes into char
	cases := []replyCase{
		{name: "text split inside a 2-byte character", source: "https://github.com/api7/aisix/issues/111",
			reply: llmtest.Reply{Body: []byte(text), Pause: 20 * time.Millisecond, PauseAfter: inside(text, "ü", 1)},
			want:  replyView{Text: "Grüße, 世界 🌍", Finish: llm.FinishStop}},
		{name: "text split inside a 4-byte character", source: "https://github.com/danielmiessler/Fabric/pull/2203 (F0 9F | 8C 8D)",
			reply: llmtest.Reply{Body: []byte(text), Pause: 20 * time.Millisecond, PauseAfter: inside(text, "🌍", 2)},
			want:  replyView{Text: "Grüße, 世界 🌍", Finish: llm.FinishStop}},
		{name: "tool arguments split inside a 3-byte character", source: "https://github.com/zeroclaw-labs/zeroclaw/pull/4754 (CJK split across chunks)",
			reply: llmtest.Reply{Body: []byte(call), Pause: 20 * time.Millisecond, PauseAfter: inside(call, "界", 1)},
			tools: []string{"write"}, want: replyView{Finish: llm.FinishToolCalls, Calls: []string{`write {"text":"世界 🌍"}`}}},
	}
	runReplyCases(t, cases)
}
