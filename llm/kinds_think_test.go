package llm_test

import (
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// TestReplyThinkTags: reasoning models served without a reasoning parser
// put their chain of thought in the content as a leading <think>…</think>
// block; it becomes reasoning, with the tags split across deltas
// anywhere. A <think> that does not open the content is text.
func TestReplyThinkTags(t *testing.T) {
	t.Parallel()
	stream := func(pieces ...string) []string {
		var out []string
		for _, p := range pieces {
			out = append(out, content(p))
		}
		return append(out, finish(`"stop"`))
	}
	answer := replyView{Reasoning: "Two and two.\n", Text: "It is 4.", Finish: llm.FinishStop}
	cases := []replyCase{
		{name: "deepseek-r1 on vllm without a reasoning parser", source: "vLLM reasoning outputs docs: without --reasoning-parser deepseek_r1 the <think> block stays in content",
			reply: sse(stream("<think>", "\nTwo and", " two.\n", "</think>", "\n\nIt is", " 4.")...), want: answer},
		{name: "tags split across deltas", source: "llama.cpp server --reasoning-format none (tokens stream as '<th', 'ink>')",
			reply: sse(stream("<th", "ink>\nTwo and two.\n</th", "ink>\n\nIt is 4.")...), want: answer},
		{name: "groq reasoning_format raw in one delta", source: "Groq reasoning docs: reasoning_format \"raw\" keeps <think> tags in content",
			reply: sse(stream("<think>\nTwo and two.\n</think>\n\nIt is 4.")...), want: answer},
		{name: "ollama qwen3 with leading whitespace, close tag split at every byte", source: "Ollama OpenAI compatibility before think support: Qwen3 <think> in content",
			reply: sse(stream("\n", "<think>", "Two and two.\n", "<", "/", "t", "h", "i", "n", "k", ">", "It is 4.")...), want: answer},
		{name: "a think tag later in an answer is text", source: "negative: only a leading block is reasoning",
			reply: sse(stream("Wrap it in ", "<think>", " tags.")...),
			want:  replyView{Text: "Wrap it in <think> tags.", Finish: llm.FinishStop}},
		{name: "a lookalike opening is text", source: "negative: '<th' that becomes '<thead>'",
			reply: sse(stream("<th", "ead>x</thead>")...),
			want:  replyView{Text: "<thead>x</thead>", Finish: llm.FinishStop}},
		{name: "a block cut by the output limit stays reasoning", source: "DeepSeek-R1 hitting max_tokens while thinking (finish_reason length)",
			reply: sse(content("<think>Two and"), content(" two </thi"), finish(`"length"`)),
			want:  replyView{Reasoning: "Two and two </thi", Finish: llm.FinishLength}},
	}
	runReplyCases(t, cases)
}
