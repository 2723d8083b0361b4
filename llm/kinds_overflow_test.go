package llm_test

import (
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestReplyContextOverflow: each server's own wording of "the request does
// not fit", with the status and body it sends. Every one must come out as
// context-overflow (compact, then retry), never as a rate limit retried
// forever nor as a fatal end of the run.
func TestReplyContextOverflow(t *testing.T) {
	t.Parallel()
	overflow := replyView{Class: llm.ClassContextOverflow}
	cases := []replyCase{
		{name: "llama.cpp exceed_context_size_error", source: "https://github.com/ggml-org/llama.cpp/pull/15780",
			reply: jsonError(400, `{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`),
			want:  overflow},
		{name: "llama.cpp 500 context size exceeded", source: "https://github.com/ggml-org/llama.cpp/issues/19774",
			reply: jsonError(500, `{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`),
			want:  overflow},
		{name: "groq 413 request larger than the TPM limit", source: "https://github.com/continuedev/continue/issues/10218",
			reply: jsonError(413, "{\"error\":{\"message\":\"Request too large for model `llama-3.3-70b-versatile` in organization `org_01x` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 14137, please reduce your message size and try again.\",\"type\":\"tokens\",\"code\":\"rate_limit_exceeded\"}}",
				"retry-after", "7"),
			want: overflow},
		{name: "openai 429 request larger than the TPM limit", source: "https://github.com/vanna-ai/vanna-flask/issues/11",
			reply: jsonError(429, `{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 342389. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`),
			want:  overflow},
		{name: "xai maximum prompt length", source: "https://github.com/cline/cline/issues/3120",
			reply: jsonError(400, `{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 136973 tokens."}`),
			want:  overflow},
		{name: "dashscope qwen range of input length", source: "https://github.com/agentscope-ai/QwenPaw/issues/6255",
			reply: jsonError(400, `{"error":{"code":"invalid_parameter_error","message":"<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]","param":null,"type":"invalid_request_error"},"request_id":"81a373d6"}`),
			want:  overflow},
		{name: "moonshot exceeded model token limit", source: "https://github.com/MoonshotAI/kimi-cli/issues/2011",
			reply: jsonError(400, `{"error":{"message":"Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)","type":"invalid_request_error"}}`),
			want:  overflow},
		{name: "minimax context window exceeds limit", source: "https://github.com/rowboatlabs/rowboat/issues/514",
			reply: jsonError(400, `{"type":"error","error":{"type":"bad_request_error","message":"invalid params, context window exceeds limit (2013)","http_code":"400"},"request_id":"0634"}`),
			want:  overflow},
		{name: "minimax 200 with base_resp", source: "MiniMax ChatCompletion v2 docs: errors come as HTTP 200 with base_resp.status_code (2013 invalid params)",
			reply: llmtest.HTTPError(200, `{"id":"","choices":null,"base_resp":{"status_code":2013,"status_msg":"invalid params, context window exceeds limit"}}`, "Content-Type", "application/json"),
			want:  overflow},
		{name: "gemini input token count", source: "Gemini OpenAI-compatible endpoint INVALID_ARGUMENT (https://github.com/google-gemini/gemini-cli issues)",
			reply: jsonError(400, `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`),
			want:  overflow},
		{name: "anthropic input plus max_tokens", source: "Anthropic API errors: input length and max_tokens exceed context limit",
			reply: jsonError(400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again\"}}"),
			want:  overflow},
		{name: "vllm maximum context length", source: "https://github.com/vllm-project/vllm/issues/20409",
			reply: jsonError(400, `{"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the messages or completion. None","type":"BadRequestError","param":null,"code":400}`),
			want:  overflow},
		{name: "vllm decoder prompt longer than max model length", source: "https://github.com/Gabesarch/grounded-rl/issues/16",
			reply: jsonError(400, "{\"object\":\"error\",\"message\":\"The decoder prompt (length 10127) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}"),
			want:  overflow},
		{name: "tgi inputs plus max_new_tokens", source: "https://github.com/huggingface/chat-ui/issues/340",
			reply: jsonError(422, "{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 3474 `inputs` tokens and 1024 `max_new_tokens`\",\"error_type\":\"validation\"}"),
			want:  overflow},
		{name: "sglang input longer than context length", source: "https://github.com/QwenLM/Qwen3/issues/1321",
			reply: jsonError(400, `{"object":"error","message":"The input (61709 tokens) is longer than the model's context length (40960 tokens).","type":"BadRequestError","param":null,"code":400}`),
			want:  overflow},
		{name: "lm studio keep the first tokens", source: "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/237",
			reply: jsonError(400, `{"error":"Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`),
			want:  overflow},
		{name: "copilot code model_max_prompt_tokens_exceeded", source: "GitHub Copilot 400 body quoted in ericc-ch/copilot-api's token-limit handling and https://github.com/jjleng/copilot-more/issues/35",
			reply: jsonError(400, `{"error":{"message":"prompt token count of 391491 exceeds the limit of 128000","code":"model_max_prompt_tokens_exceeded"}}`),
			want:  overflow},
		{name: "copilot code without the sentence", source: "GitHub Copilot: the code alone decides (its Responses leg words the message differently)",
			reply: jsonError(400, `{"error":{"message":"Request body is too large for this model","code":"model_max_prompt_tokens_exceeded"}}`),
			want:  overflow},
		{name: "cohere too many tokens", source: "https://github.com/cohere-ai/sandbox-topically/issues/4",
			reply: jsonError(400, `{"message":"too many tokens: total number of tokens (prompt and prediction) cannot exceed 2048 - received 6354. Try using a shorter prompt or a smaller max_tokens value."}`),
			want:  overflow},
		{name: "openrouter wraps anthropic's prompt is too long in metadata.raw", source: "OpenRouter \"Provider returned error\" bodies with the upstream's body as a string in metadata.raw (quoted in many reports, e.g. a DeepSeek and an Anthropic upstream)",
			reply: jsonError(400, `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210342 tokens > 200000 maximum\"}}","provider_name":"Anthropic","is_byok":false}}}`),
			want:  overflow},
		{name: "openrouter wraps deepseek's context_length_exceeded in metadata.raw", source: "OpenRouter metadata.raw wrapping an OpenAI-style upstream body (provider_error_code beside it)",
			reply: jsonError(400, `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"This model's maximum context length is 131072 tokens. However, you requested 140213 tokens.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"context_length_exceeded\"}}","provider_name":"DeepSeek","is_byok":false,"provider_error_code":"context_length_exceeded"}}}`),
			want:  overflow},
		{name: "litellm proxy names the exception", source: "LiteLLM ContextWindowExceededError as its proxy sends it, wrapping Mistral's misspelt sentence (quoted in a client's context-limit tests)",
			reply: jsonError(400, `{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: MistralException - Error code: 400 - {'object': 'error', 'message': \"This model's maximum context lenght is 15000 tokens. However, you requested 15018 tokens (12970) in the messages, 2048 in the completion.\"}","type":null,"param":null,"code":"400"}}`),
			want:  overflow},
		{name: "mistral's misspelt maximum context lenght", source: "the Mistral sentence of the LiteLLM case above, sent directly",
			reply: jsonError(400, `{"object":"error","message":"This model's maximum context lenght is 15000 tokens. However, you requested 15018 tokens (12970) in the messages, 2048 in the completion.","type":"invalid_request_error","param":null,"code":null}`),
			want:  overflow},
		{name: "lm studio overflow inside a 200 stream", source: "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2322",
			reply: llmtest.SSE("data: {\"error\":{\"message\":\"Reached context length of 4096 tokens with model (arch: gpt-oss) that does not currently support mid-generation context overflow.\"}}\n\n"),
			want:  overflow},
	}
	runReplyCases(t, cases)
}
