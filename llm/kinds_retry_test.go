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
		{name: "the header beats the message", source: "https://github.com/openai/openai-node/issues/1477",
			reply: jsonError(429, `{"error":{"message":"Rate limit reached. Please try again in 20s.","type":"requests","code":"rate_limit_exceeded"}}`, "retry-after", "3"),
			want:  retry(3 * time.Second)},
		{name: "openai billing quota is fatal", source: "https://github.com/sashabaranov/go-openai/issues/250",
			reply: jsonError(429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
			want:  fatal},
		{name: "minimax insufficient balance in base_resp", source: "MiniMax ChatCompletion v2 docs: base_resp.status_code 1008 insufficient balance",
			reply: llmtest.HTTPError(200, `{"id":"","choices":null,"base_resp":{"status_code":1008,"status_msg":"insufficient balance"}}`, "Content-Type", "application/json"),
			want:  fatal},
	}
	runReplyCases(t, cases)
}
