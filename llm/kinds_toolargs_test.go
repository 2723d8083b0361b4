package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// argDelta is a chunk carrying one tool-call fragment; id and name go on
// the first fragment of a call only.
func argDelta(index int, id, name, args string) string {
	a, _ := json.Marshal(args)
	fn := `"arguments":` + string(a)
	if name != "" {
		fn = `"name":"` + name + `",` + fn
	}
	idPart := ""
	if id != "" {
		idPart = `"id":"` + id + `","type":"function",`
	}
	return `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + string(rune('0'+index)) + `,` + idPart + `"function":{` + fn + `}}]},"finish_reason":null}]}`
}

// TestReplyCumulativeToolArguments: servers that resend the arguments so
// far in every delta (or the whole arguments once more at the end) yield
// the latest arguments, not their concatenation; true increments that
// merely look like repeats are kept.
func TestReplyCumulativeToolArguments(t *testing.T) {
	t.Parallel()
	calls := func(c ...string) replyView { return replyView{Finish: llm.FinishToolCalls, Calls: c} }
	cases := []replyCase{
		{name: "qianfan snapshots in every delta", source: "https://github.com/NousResearch/hermes-agent/pull/35718 (DeepSeek via Baidu Qianfan)",
			reply: sse(argDelta(0, "call_1", "read", `{"path":`), argDelta(0, "", "", `{"path":"a.go"`),
				argDelta(0, "", "", `{"path":"a.go"}`), finish(`"tool_calls"`)),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
		{name: "complete arguments resent at the end", source: "https://github.com/lidge-jun/opencodex/issues/361",
			reply: sse(argDelta(0, "tool_1", "shell", ""), argDelta(0, "", "", `{"command":"ls /home"}`),
				argDelta(0, "", "", `{"command":"ls /home"}`), finish(`"tool_calls"`)),
			tools: []string{"shell"}, want: calls(`shell {"command":"ls /home"}`)},
		{name: "snapshots with a repeated snapshot", source: "https://github.com/icoretech/codex-pooler/pull/193 (ChatGPT web backend accumulated snapshots)",
			reply: sse(argDelta(0, "call_9", "grep", `{"q":`), argDelta(0, "", "", `{"q":"x"`), argDelta(0, "", "", `{"q":"x"`),
				argDelta(0, "", "", `{"q":"x"}`), finish(`"tool_calls"`)),
			tools: []string{"grep"}, want: calls(`grep {"q":"x"}`)},
		{name: "parallel calls in snapshot mode", source: "https://github.com/NousResearch/hermes-agent/pull/35718 (per-slot latch)",
			reply: sse(argDelta(0, "c1", "read", `{"path":"a`), argDelta(1, "c2", "read", `{"path":"b`),
				argDelta(0, "", "", `{"path":"a"}`), argDelta(1, "", "", `{"path":"b"}`), finish(`"tool_calls"`)),
			tools: []string{"read"}, want: calls(`read {"path":"a"}`, `read {"path":"b"}`)},
		{name: "increments that look like repeats stay increments", source: "https://github.com/diegosouzapw/OmniRoute/pull/3762 (gpt-5.5 and Kimi stream true increments)",
			reply: sse(argDelta(0, "c1", "edit", `{"a":"`), argDelta(0, "", "", `x`), argDelta(0, "", "", `x`),
				argDelta(0, "", "", `","cmd":"l`), argDelta(0, "", "", `l -l"}`), finish(`"tool_calls"`)),
			tools: []string{"edit"}, want: calls(`edit {"a":"xx","cmd":"ll -l"}`)},
	}
	runReplyCases(t, cases)
}
