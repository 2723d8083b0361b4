package llm_test

import (
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// geminiQuota is a Gemini 429 body with a QuotaFailure for quotaID and a
// RetryInfo of delay, as the Gemini API sends it.
func geminiQuota(quotaID, delay string) string {
	return `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"` + quotaID + `","quotaValue":"20"}]},` +
		`{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}]}}`
}

// TestReplyRetryHints: the wait a server asks for in the body (Gemini's
// RetryInfo, "try again in 4.77s"), and quota details that tell a
// per-minute limit (wait and retry) from a daily or billing limit (fatal).
func TestReplyRetryHints(t *testing.T) {
	t.Parallel()
	retry := func(d time.Duration) replyView { return replyView{Class: llm.ClassRetryable, RetryAfter: d} }
	fatal := replyView{Class: llm.ClassFatal}
	cases := []replyCase{
		{name: "gemini per-minute quota waits RetryInfo", source: "https://github.com/diegosouzapw/OmniRoute/issues/9504",
			reply: jsonError(429, geminiQuota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "36s")),
			want:  retry(36 * time.Second)},
		{name: "gemini per-day quota is fatal", source: "https://github.com/diegosouzapw/OmniRoute/issues/9504; https://github.com/gke-labs/gemini-for-kubernetes-development/issues/1215",
			reply: jsonError(429, geminiQuota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "36s")),
			want:  fatal},
		{name: "gemini openai-compatible array body", source: "https://github.com/letterstory/lettertrace/pull/34",
			reply: jsonError(429, `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"38s"}]}}]`),
			want:  retry(38 * time.Second)},
		{name: "gemini code assist daily limit in ErrorInfo", source: "https://github.com/google-gemini/gemini-cli/issues/10925",
			reply: jsonError(429, `{"error":{"code":429,"message":"Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier'.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"quota_metric":"cloudcode-pa.googleapis.com/gemini_2_5_pro_requests","quota_limit":"Gemini25ProRequestsPerDay"}}]}}`),
			want:  fatal},
		{name: "gemini exhausted without details", source: "https://github.com/google-gemini/gemini-cli/issues/14811",
			reply: jsonError(429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`),
			want:  retry(0)},
		{name: "groq try again in the message", source: "https://github.com/elizaOS/eliza/issues/4040",
			reply: jsonError(429, "{\"error\":{\"message\":\"Rate limit reached for model `llama-3.1-8b-instant` in organization `org_x` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5034, Requested 1443. Please try again in 4.77s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing\",\"type\":\"tokens\",\"code\":\"rate_limit_exceeded\"}}"),
			want:  retry(4770 * time.Millisecond)},
		{name: "openai try again in milliseconds", source: "OpenAI rate-limit error message (https://platform.openai.com/docs/guides/rate-limits)",
			reply: jsonError(429, `{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29950, Requested 120. Please try again in 140ms.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`),
			want:  retry(140 * time.Millisecond)},
		{name: "azure retry after N seconds in the message", source: "Azure OpenAI 429 body (\"Please retry after 8 seconds.\"), quoted in many reports, e.g. Azure-Samples and openai-python tracebacks",
			reply: jsonError(429, `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-06-01 have exceeded call rate limit of your current OpenAI S0 pricing tier. Please retry after 8 seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit."}}`),
			want:  retry(8 * time.Second)},
		{name: "try again in N seconds", source: "Azure OpenAI (\"Try again in 59 seconds.\"), quoted in a rate-limit parser's tests",
			reply: jsonError(429, `{"error":{"code":"429","message":"Rate limit is exceeded for the selected model, Try again in 59 seconds."}}`),
			want:  retry(59 * time.Second)},
		{name: "retry after N minutes in the message", source: "the Azure wording with a unit in minutes",
			reply: jsonError(429, `{"error":{"code":"429","message":"Requests to the Embeddings_Create Operation have exceeded call rate limit. Please retry after 2 minutes."}}`),
			want:  retry(2 * time.Minute)},
		{name: "the header beats the message", source: "https://github.com/openai/openai-node/issues/1477",
			reply: jsonError(429, `{"error":{"message":"Rate limit reached. Please try again in 20s.","type":"requests","code":"rate_limit_exceeded"}}`, "retry-after", "3"),
			want:  retry(3 * time.Second)},
		{name: "openai billing quota is fatal", source: "https://github.com/sashabaranov/go-openai/issues/250",
			reply: jsonError(429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
			want:  fatal},
		{name: "openrouter daily free-model cap is fatal", source: "OpenRouter 429 body quoted in tests of projects that fail over on it; https://github.com/openclaw/openclaw/issues/147546",
			reply: jsonError(429, `{"error":{"message":"Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1788825600000"},"provider_name":null}}}`),
			want:  fatal},
		{name: "openrouter per-minute free-model limit stays retryable", source: "OpenRouter free-models-per-min (limits docs: 20 requests a minute on :free models)",
			reply: jsonError(429, `{"error":{"message":"Rate limit exceeded: free-models-per-min. ","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"20","X-RateLimit-Remaining":"0"},"provider_name":null}}}`),
			want:  retry(0)},
		{name: "openrouter wraps a google quota in metadata.raw", source: "OpenRouter metadata.raw wrapping Google AI Studio's 429 body (a multi-line JSON string)",
			reply: jsonError(429, `{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted. Please retry in 21s.\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n","provider_name":"Google AI Studio","is_byok":false}}}`),
			want:  retry(21 * time.Second)},
		{name: "openrouter wraps a bad request: still fatal", source: "OpenRouter metadata.raw wrapping DeepSeek's invalid_request_error (tool messages missing), reported by a chatbot project",
			reply: jsonError(400, `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_request_error\"}}","provider_name":"DeepSeek","is_byok":false,"provider_error_code":"invalid_request_error"}}}`),
			want:  fatal},
		{name: "openrouter raw that is not JSON", source: "OpenRouter metadata.raw holding plain text (\"Gemini models require OpenRouter reasoning details to be preserved...\")",
			reply: jsonError(400, `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"Gemini models require OpenRouter reasoning details to be preserved in each request.","provider_name":"Google"}}}`),
			want:  fatal},
		{name: "minimax insufficient balance in base_resp", source: "MiniMax ChatCompletion v2 docs: base_resp.status_code 1008 insufficient balance",
			reply: llmtest.HTTPError(200, `{"id":"","choices":null,"base_resp":{"status_code":1008,"status_msg":"insufficient balance"}}`, "Content-Type", "application/json"),
			want:  fatal},
	}
	runReplyCases(t, cases)
}

// TestReplyExhaustedQuota: a provider's own code or wording for a quota,
// balance or account that waiting never fixes is fatal, whatever status
// carries it (429, 500, or a stream); rate limits beside them stay
// retryable.
func TestReplyExhaustedQuota(t *testing.T) {
	t.Parallel()
	fatal := replyView{Class: llm.ClassFatal}
	retry := replyView{Class: llm.ClassRetryable}
	cases := []replyCase{
		{name: "zhipu 1113 unpaid balance in a 429", source: "r3 case 65; https://github.com/zhayujie/CowAgent/issues/2910",
			reply: jsonError(429, `{"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}`), want: fatal},
		{name: "zhipu 1113 as a number with the English wording", source: "r3 case 65 related: https://github.com/continuedev/continue/issues/11823 (Z.ai English message)",
			reply: jsonError(429, `{"error":{"code":1113,"message":"Insufficient balance or no resource package. Please recharge."}}`), want: fatal},
		{name: "zhipu 1304 daily call limit", source: "Zhipu BigModel error codes: 1304 the API's calls reached today's limit (sent as 429)",
			reply: jsonError(429, `{"error":{"code":"1304","message":"该API的调用次数已达到今日上限"}}`), want: fatal},
		{name: "zhipu 1302 concurrency stays retryable", source: "Zhipu BigModel error codes: 1302 concurrency too high (sent as 429)",
			reply: jsonError(429, `{"error":{"code":"1302","message":"您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}`), want: retry},
		{name: "moonshot suspended account", source: "Moonshot API error table: 429 exceeded_current_quota_error (account suspended or out of balance)",
			reply: jsonError(429, `{"error":{"message":"Your account org-x<ak-y> is suspended, please check your plan and billing details","type":"exceeded_current_quota_error"}}`), want: fatal},
		{name: "moonshot rate limit stays retryable", source: "Moonshot API error table: 429 rate_limit_reached_error",
			reply: jsonError(429, `{"error":{"message":"Your account org-x<ak-y> request reached max request: 3, please try again after 1 seconds","type":"rate_limit_reached_error"}}`),
			want:  replyView{Class: llm.ClassRetryable, RetryAfter: time.Second}}, // the wait in words
		{name: "moonshot engine overloaded stays retryable", source: "Moonshot API error table: 429 engine_overloaded_error",
			reply: jsonError(429, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"engine_overloaded_error"}}`), want: retry},
		{name: "quota code in another spelling", source: "sibling of case 26: insufficient_quota written InsufficientQuota",
			reply: jsonError(429, `{"error":{"code":"InsufficientQuota","message":"The quota of this resource is exhausted."}}`), want: fatal},
		{name: "openai hard billing limit inside a 429", source: "OpenAI error code billing_hard_limit_reached; sibling of case 26",
			reply: jsonError(429, `{"error":{"message":"Billing hard limit has been reached","type":"invalid_request_error","code":"billing_hard_limit_reached"}}`), want: fatal},
		{name: "dashscope arrearage", source: "Alibaba Cloud Model Studio error codes: Arrearage (account overdue)",
			reply: jsonError(429, `{"code":"Arrearage","message":"Access denied, please make sure your account is in good standing.","request_id":"r1"}`), want: fatal},
		{name: "volcengine ark overdue account", source: "Volcengine Ark error codes: AccountOverdueError",
			reply: jsonError(429, `{"error":{"code":"AccountOverdueError","message":"The request failed because your account has an overdue balance.","type":"Forbidden"}}`), want: fatal},
		{name: "xai out of credits", source: "xAI API 429 for a team without credits or at its spending limit",
			reply: jsonError(429, `{"code":"Some resource has been exhausted","error":"Your team team-x has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit."}`), want: fatal},
		{name: "anthropic credit balance in a stream", source: "Anthropic API: 'Your credit balance is too low to access the Anthropic API', here relayed in-stream by a gateway",
			reply: sse(`{"error":{"type":"overloaded_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`), want: fatal},
		{name: "ollama model too big for memory in a 500", source: "Ollama server error 'model requires more system memory … than is available' (HTTP 500)",
			reply: jsonError(500, `{"error":"model requires more system memory (41.0 GiB) than is available (15.2 GiB)"}`), want: fatal},
	}
	runReplyCases(t, cases)
}
