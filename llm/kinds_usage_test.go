package llm_test

import (
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestReplyUsage: usage reported in unusual places, and a stream cut after
// the finish chunk but before the usage chunk: the turn is complete and
// its tokens are unknown (nil), never a measured 0.
func TestReplyUsage(t *testing.T) {
	t.Parallel()
	cut := func(body string) llmtest.Reply {
		return llmtest.Reply{Body: []byte(body), Cut: true, CutAfter: len(body)}
	}
	finished := content("Hello.") + "\n\n" + "data: " + finish(`"stop"`) + "\n\n"
	cases := []replyCase{
		{name: "moonshot usage inside choices[0] with top-level cached_tokens", source: "https://github.com/AstrBotDevs/AstrBot/issues/6614",
			reply: sse(content("Hello."),
				`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":1336,"completion_tokens":31,"total_tokens":1367,"cached_tokens":1280}}]}`),
			want: replyView{Text: "Hello.", Finish: llm.FinishStop,
				Usage: &llm.Usage{InputTokens: 1336, OutputTokens: 31, CachedInputTokens: 1280}}},
		{name: "groq usage in x_groq", source: "https://github.com/vercel/ai/issues/1651",
			reply: sse(content("Hello."),
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"queue_time":0.01,"prompt_tokens":18,"completion_tokens":3,"total_tokens":21}}}`),
			want: replyView{Text: "Hello.", Finish: llm.FinishStop, Usage: usage(18, 3)}},
		{name: "vllm continuous usage stats: the last report wins", source: "vLLM OpenAI server docs: stream_options.continuous_usage_stats sends usage on every chunk",
			reply: sse(`{"choices":[{"index":0,"delta":{"content":"Hel"}}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`,
				`{"choices":[{"index":0,"delta":{"content":"lo."}}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`),
			want: replyView{Text: "Hello.", Finish: llm.FinishStop, Usage: usage(9, 3)}},
		{name: "zero placeholder usage is no measurement", source: "Ollama OpenAI compatibility: usage with zero counts on chunks before the last (https://github.com/ollama/ollama/issues/4357 transcript)",
			reply: sse(`{"choices":[{"index":0,"delta":{"content":"Hello."},"finish_reason":""}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`,
				finish(`"stop"`)),
			want: replyView{Text: "Hello.", Finish: llm.FinishStop}},
		{name: "cut after the finish chunk, before the usage chunk", source: "OpenAI stream_options.include_usage docs: an interrupted stream may not deliver the final usage chunk",
			reply: cut("data: " + finished),
			want:  replyView{Text: "Hello.", Finish: llm.FinishStop}},
		{name: "eof after the finish chunk without usage or [DONE]", source: "https://github.com/ikawrakow/ik_llama.cpp/issues/467",
			reply: llmtest.SSE("data: " + finished),
			want:  replyView{Text: "Hello.", Finish: llm.FinishStop}},
		{name: "cut before the finish chunk is retried", source: "https://github.com/deepseek-ai/DeepSeek-V3/issues/1608",
			reply: cut("data: " + content("Hello.") + "\n\n"),
			want:  replyView{Text: "Hello.", Class: llm.ClassRetryable}},
	}
	runReplyCases(t, cases)
}
