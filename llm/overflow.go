package llm

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// overflowWordings are lower-case fragments of the messages with which
// servers say a request does not fit the model's context. Each names where
// the wording comes from; classify checks them before any rate-limit rule,
// because a request that can never fit must be compacted, not retried.
func overflowWordings() []string {
	return []string{
		"maximum context length",                     // OpenAI, vLLM, DeepSeek, OpenRouter, Mistral, Fireworks
		"maximum context lenght",                     // Mistral's misspelling, seen through LiteLLM
		"context_length_exceeded",                    // OpenAI, Azure, Groq codes appearing in messages
		"context window",                             // "exceeds the context window"; MiniMax "context window exceeds limit (2013)" (MiniMax-AI/MiniMax-M2#119)
		"prompt is too long",                         // Anthropic (whoz-oss/coday#26)
		"exceed context limit",                       // Anthropic "input length and `max_tokens` exceed context limit"
		"exceeds the available context size",         // llama.cpp server (ggml-org/llama.cpp#15780)
		"exceed_context_size_error",                  // llama.cpp server error type
		"context size has been exceeded",             // llama.cpp 500 form (ggml-org/llama.cpp#19774), LM Studio MLX
		"maximum prompt length is",                   // xAI "This model's maximum prompt length is 131072 but the request contains 136973 tokens." (cline/cline#3120)
		"range of input length should be",            // DashScope/Qwen "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 204800]" (QwenLM/qwen-code#98)
		"exceeded model token limit",                 // Moonshot "Invalid request: Your request exceeded model token limit: 262144" (MoonshotAI/kimi-cli#2011)
		"model max length exceeded",                  // Moonshot v1 (MoonshotAI/MoonshotAI-Cookbook#18)
		"longer than the model's context length",     // SGLang "The input (61709 tokens) is longer than the model's context length" (QwenLM/Qwen3#1321)
		"longer than the maximum model length",       // vLLM "The decoder prompt (length 10127) is longer than the maximum model length"
		"exceeds the maximum allowed length",         // SGLang "Input length (160062 tokens) exceeds the maximum allowed length" (sgl-project/sglang#4048)
		"`inputs` tokens + `max_new_tokens` must be", // TGI (huggingface/chat-ui#340)
		"`inputs` must have less than",               // TGI (meta-llama/llama#1103)
		"when context the overflows",                 // LM Studio "Trying to keep the first N tokens when context the overflows" (lmstudio-bug-tracker#237)
		"reached context length",                     // LM Studio "Reached context length of 32000 tokens" (lmstudio-bug-tracker#1024)
		"exceeds context length",                     // LM Studio "Input length 6491 exceeds context length 1500"
		"reduce the length of the messages",          // vLLM, Groq context_length_exceeded
		"prompt exceeds max length",                  // Zhipu GLM code 1261
		"input is too long for requested model",      // Amazon Bedrock
		"contextwindowexceedederror",                 // LiteLLM's exception name: "litellm.ContextWindowExceededError: …" whatever the upstream said
		"prompt token count of",                      // GitHub Copilot "prompt token count of 93854 exceeds the limit of 90000" (jjleng/copilot-more#35)
		"too many tokens: total number of tokens",    // Cohere "too many tokens: total number of tokens (prompt and prediction) cannot exceed 2048" (cohere-ai/sandbox-topically#4)
	}
}

// isOverflow reports whether an error says the request does not fit: a
// known code or type, a known wording, HTTP 413, or a per-minute token
// limit smaller than the request itself (Groq 413 and OpenAI 429 "Request
// too large for model … on tokens per minute (TPM): Limit 6000, Requested
// 14810", continuedev/continue#10218): waiting never makes such a request
// fit, only a smaller one does.
func isOverflow(status int, code, typ, msg string) bool {
	if code == "context_length_exceeded" || code == "model_max_prompt_tokens_exceeded" || // GitHub Copilot
		typ == "exceed_context_size_error" || status == 413 {
		return true
	}
	for _, w := range overflowWordings() {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return geminiOverflow(msg) || tooLargeForLimit(msg)
}

var limitRequested = regexp.MustCompile(`limit (\d+), requested (\d+)`)

// tooLargeForLimit matches "request too large … Limit L, Requested R" with
// R > L.
func tooLargeForLimit(msg string) bool {
	if !strings.Contains(msg, "request too large") {
		return false
	}
	m := limitRequested.FindStringSubmatch(msg)
	if m == nil {
		return true // "request too large" without figures: still too large
	}
	limit, _ := strconv.Atoi(m[1])
	requested, _ := strconv.Atoi(m[2])
	return requested > limit
}

// geminiOverflow matches Gemini's "input token count (N) exceeds the maximum
// number of tokens allowed (M)".
func geminiOverflow(msg string) bool {
	i := strings.Index(msg, "input token count")
	return i >= 0 && strings.Contains(msg[i:], "exceeds the maximum number of tokens allowed")
}

var (
	retryInMessage = regexp.MustCompile(`(?:try again|retry) in ((?:\d+(?:\.\d+)?(?:ms|s|m|h))+)\b`)
	// retryInWords is a delay with its unit in words: Azure "Please retry
	// after 8 seconds.", "Try again in 59 seconds.".
	retryInWords = regexp.MustCompile(`(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?) ?(milliseconds?|seconds?|secs?|minutes?|mins?|hours?)\b`)
)

// wordUnits are the units retryInWords reads.
var wordUnits = map[byte]time.Duration{'m': time.Minute, 's': time.Second, 'h': time.Hour}

// messageRetryDelay reads a delay written into the message: OpenAI and
// Groq "Please try again in 4.77s" / "in 1m30s" / "in 20ms", Gemini
// "Please retry in 36.429760048s.", Azure "Please retry after 8
// seconds.". 0 when there is none.
func messageRetryDelay(msg string) time.Duration {
	msg = strings.ToLower(msg)
	if m := retryInMessage.FindStringSubmatch(msg); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil && d >= 0 {
			return d
		}
	}
	m := retryInWords.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	unit := wordUnits[m[2][0]]
	if strings.HasPrefix(m[2], "milli") {
		unit = time.Millisecond
	} else if strings.HasPrefix(m[2], "min") {
		unit = time.Minute
	}
	return time.Duration(n * float64(unit))
}

// googleDetails reads the google.rpc details of a Gemini error
// (ai.google.dev error docs; diegosouzapw/OmniRoute#9504): RetryInfo's
// retryDelay ("36s", a protobuf Duration) and the period of the exhausted
// quota from QuotaFailure violations' quotaId or ErrorInfo's quota_limit
// ("GenerateRequestsPerMinutePerProjectPerModel-FreeTier" is "minute",
// "…PerDay…" is "day").
func googleDetails(raw json.RawMessage) (delay time.Duration, period string) {
	var details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
		Violations []struct {
			QuotaID string `json:"quotaId"`
		} `json:"violations"`
		Metadata struct {
			QuotaLimit string `json:"quota_limit"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &details) != nil {
		return 0, ""
	}
	for _, d := range details {
		if d.RetryDelay != "" {
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				delay = v
			}
		}
		ids := []string{d.Metadata.QuotaLimit}
		for _, v := range d.Violations {
			ids = append(ids, v.QuotaID)
		}
		for _, id := range ids {
			period = longerPeriod(period, quotaPeriod(id))
		}
	}
	return delay, period
}

// quotaPeriod names the window of a quota id: "second", "minute", "day" or "".
func quotaPeriod(id string) string {
	id = strings.ToLower(id)
	switch {
	case strings.Contains(id, "perday"), strings.Contains(id, "per_day"), strings.Contains(id, "daily"):
		return "day"
	case strings.Contains(id, "perminute"), strings.Contains(id, "per_minute"):
		return "minute"
	case strings.Contains(id, "persecond"), strings.Contains(id, "per_second"):
		return "second"
	}
	return ""
}

// longerPeriod returns the longer of two quota windows: a day limit that is
// exhausted decides, whatever minute limit is exhausted beside it.
func longerPeriod(a, b string) string {
	rank := map[string]int{"": 0, "second": 1, "minute": 2, "day": 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
