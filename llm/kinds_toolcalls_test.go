package llm_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// callChunk is a chunk with one tool-call fragment. index < 0 leaves the
// index out; empty id, name or args leave those members out. extra adds
// raw top-level chunk members ("\"model\":\"x\",").
func callChunk(extra string, index int, id, name, args string) string {
	tc := ""
	if index >= 0 {
		tc += `"index":` + strconv.Itoa(index) + `,`
	}
	if id != "" {
		tc += `"id":"` + id + `","type":"function",`
	}
	fn := ""
	if name != "" {
		fn += `"name":"` + name + `"`
	}
	if args != "" {
		a, _ := json.Marshal(args)
		if fn != "" {
			fn += ","
		}
		fn += `"arguments":` + string(a)
	}
	return `{` + extra + `"choices":[{"index":0,"delta":{"tool_calls":[{` + tc + `"function":{` + fn + `}}]},"finish_reason":null}]}`
}

// TestReplyToolCallIdentity: members that change in the middle of one
// call or one stream. Only a function name starts a new call at a known
// index; a fresh id alone, or a new chunk id or model, continues it.
func TestReplyToolCallIdentity(t *testing.T) {
	t.Parallel()
	calls := func(c ...string) replyView { return replyView{Finish: llm.FinishToolCalls, Calls: c} }
	end := finish(`"tool_calls"`)
	cases := []replyCase{
		{name: "fresh id on every fragment, same index", source: "r3 case 61; https://github.com/poolsideai/pool/issues/9",
			reply: sse(callChunk("", 0, "call_a", "read", ""), callChunk("", 0, "call_b", "", `{"path":`),
				callChunk("", 0, "call_c", "", `"a.go"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
		{name: "fresh id on every fragment, no index", source: "sibling of r3 case 61 for index-less streams (Gemini style, case 03)",
			reply: sse(callChunk("", -1, "call_a", "read", ""), callChunk("", -1, "call_b", "", `{"path":`),
				callChunk("", -1, "call_c", "", `"a.go"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
		{name: "id only on a later fragment", source: "sibling of r3 case 61: https://github.com/JetBrains/koog/pull/2052 (ids missing or late)",
			reply: sse(callChunk("", 0, "", "read", `{"path":`), callChunk("", 0, "call_late", "", `"a.go"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
		{name: "new id with a name at the same index is a new call", source: "round-1 case 05 rule kept beside r3 case 61; https://github.com/microsoft/foundry-local/issues/372",
			reply: sse(callChunk("", 1, "call_a", "read", `{"path":"a.go"}`), callChunk("", 1, "call_b", "read", `{"path":"b.go"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`, `read {"path":"b.go"}`)},
		{name: "parallel calls whose ids change per fragment", source: "r3 case 61 with case 35's interleaving",
			reply: sse(callChunk("", 0, "c1", "read", ""), callChunk("", 1, "c2", "grep", ""),
				callChunk("", 0, "x1", "", `{"path":"a"}`), callChunk("", 1, "x2", "", `{"q":"b"}`), end),
			tools: []string{"read", "grep"}, want: calls(`read {"path":"a"}`, `grep {"q":"b"}`)},
		{name: "chunk id and model change mid-stream", source: "sibling of r3 case 61: OpenRouter fallback models answer under a new model and id",
			reply: sse(callChunk(`"id":"gen-1","model":"a/one",`, 0, "call_a", "read", `{"path":`),
				callChunk(`"id":"gen-2","model":"b/two",`, 0, "", "", `"a.go"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
		{name: "whole calls at one index without ids", source: "https://github.com/huggingface/smolagents/pull/1958 (Ollama through LiteLLM: parallel calls share an index); https://github.com/mcowger/plexus/issues/691 (index 0 for every call)",
			reply: sse(callChunk("", 0, "", "grep", `{"q":"Emma Bull"}`), callChunk("", 0, "", "grep", `{"q":"Virginia Woolf"}`), end),
			tools: []string{"grep"}, want: calls(`grep {"q":"Emma Bull"}`, `grep {"q":"Virginia Woolf"}`)},
		{name: "whole calls without index or id", source: "https://github.com/ollama/ollama/issues/7881 (older Ollama omits index); https://github.com/oracle/langchain-oracle/pull/254 (Gemini id-less calls)",
			reply: sse(callChunk("", -1, "", "read", `{"path":"a.go"}`), callChunk("", -1, "", "list", `{"path":"."}`), end),
			tools: []string{"read", "list"}, want: calls(`read {"path":"a.go"}`, `list {"path":"."}`)},
		{name: "whole calls that reuse one id", source: "https://github.com/camel-ai/camel/pull/3662 (a completed call receives new payload)",
			reply: sse(callChunk("", -1, "call_0", "read", `{"path":"a.go"}`), callChunk("", -1, "call_0", "read", `{"path":"b.go"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`, `read {"path":"b.go"}`)},
		{name: "fragmented calls at one index, the second named", source: "https://github.com/ollama/ollama/issues/15457 (index 0 for every call of a batch) with fragmented arguments",
			reply: sse(callChunk("", 0, "", "read", `{"path":`), callChunk("", 0, "", "", `"a.go"}`),
				callChunk("", 0, "", "grep", `{"q":`), callChunk("", 0, "", "", `"x"}`), end),
			tools: []string{"read", "grep"}, want: calls(`read {"path":"a.go"}`, `grep {"q":"x"}`)},
		{name: "control: the whole call resent with its name", source: "https://github.com/lidge-jun/opencodex/pull/361 (complete arguments repeated once more) with the name restated (round-1 case 14)",
			reply: sse(callChunk("", 0, "c1", "read", `{"path":"a.go"}`), callChunk("", 0, "c1", "read", `{"path":"a.go"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
		{name: "control: name restated with a closing fragment", source: "round-1 case 14 (Fireworks restates the name) ending on a fragment after an object that is already whole",
			reply: sse(callChunk("", 0, "c1", "read", `{"path":"a.go"}`), callChunk("", 0, "c1", "read", ` `), end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
		{name: "role and type restated on every fragment", source: "https://github.com/ollama/ollama/issues/4357 (role in every chunk); type function in every tool delta",
			reply: sse(`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"arguments":"\"a.go\"}"}}]}}]}`, end),
			tools: []string{"read"}, want: calls(`read {"path":"a.go"}`)},
	}
	runReplyCases(t, cases)
}

// TestReplyToolNameFragments: names streamed in pieces are joined; a name
// restated whole, or resent as the name so far, is not doubled; the call
// starts only once its name is complete.
func TestReplyToolNameFragments(t *testing.T) {
	t.Parallel()
	calls := func(c ...string) replyView { return replyView{Finish: llm.FinishToolCalls, Calls: c} }
	end := finish(`"tool_calls"`)
	cases := []replyCase{
		{name: "name in two pieces", source: "r3 case 62; https://github.com/continuedev/continue/pull/5849",
			reply: sse(callChunk("", 0, "c1", "gl", ""), callChunk("", 0, "", "ob", `{"pattern":"*.go"}`), end),
			tools: []string{"glob"}, want: calls(`glob {"pattern":"*.go"}`)},
		{name: "name in three pieces, no index", source: "r3 case 62 related: https://github.com/openclaw/openclaw/issues/127603 (edit_ex + isting_file)",
			reply: sse(callChunk("", -1, "c1", "edit_", ""), callChunk("", -1, "", "ex", ""),
				callChunk("", -1, "", "isting_file", `{"path":"a"}`), end),
			tools: []string{"edit_existing_file"}, want: calls(`edit_existing_file {"path":"a"}`)},
		{name: "whole name restated in every delta", source: "round-1 case 14 (Fireworks, MiniMax)",
			reply: sse(callChunk("", 0, "c1", "read", `{"path":`), callChunk("", 0, "c1", "read", `"a"}`), end),
			tools: []string{"read"}, want: calls(`read {"path":"a"}`)},
		{name: "name so far resent as snapshots", source: "sibling of r3 case 62: snapshot streams (case x14, NousResearch/hermes-agent#35718) applied to the name",
			reply: sse(callChunk("", 0, "c1", "gr", ""), callChunk("", 0, "", "grep", `{"q":"x"}`), end),
			tools: []string{"grep"}, want: calls(`grep {"q":"x"}`)},
		{name: "split name without arguments", source: "r3 case 62 with case 18 (parameterless tool)",
			reply: sse(callChunk("", 0, "c1", "li", ""), callChunk("", 0, "", "st", ""), end),
			tools: []string{"list"}, want: calls(`list {}`)},
		{name: "split names of parallel calls", source: "r3 case 62 with case 35's interleaving",
			reply: sse(callChunk("", 0, "c1", "re", ""), callChunk("", 0, "", "ad", ""), callChunk("", 1, "c2", "gr", ""),
				callChunk("", 1, "", "ep", `{"q":"x"}`), callChunk("", 0, "", "", `{"path":"a"}`), end),
			tools: []string{"read", "grep"}, want: calls(`read {"path":"a"}`, `grep {"q":"x"}`)},
	}
	runReplyCases(t, cases)
}
