package llm

import (
	"bytes"
	"encoding/json"
	"strings"
)

// finishMeaning is what a provider's finish_reason value says about the
// reply: a normalised FinishReason, or, for values that report a failure
// (an engine abort, a server-side error), the class of the error the step
// ends with.
type finishMeaning struct {
	Reason FinishReason
	Fail   ErrorClass // "" unless the value reports a failure
	Detail string     // the error message when Fail is set
}

// lookupFinish maps a finish_reason value, compared case-insensitively, to
// its meaning. The table is built from the providers' own documentation and
// code (sources beside each group). A value not in it, or one a provider
// documents as "other", is FinishUnknown: the reply is not known to be
// complete, so it never counts as done (the runner continues the session
// once and then fails; see runner.judgeFinish). OpenCode's loop does the
// same: it exits only on a finish other than "tool-calls" or "unknown".
func lookupFinish(sent string) finishMeaning {
	switch strings.ToLower(strings.TrimSpace(sent)) {
	// OpenAI: stop; Anthropic: end_turn, stop_sequence; TGI: eos_token,
	// stop_sequence (text-generation-inference#2344); Gemini native: STOP;
	// Cohere: COMPLETE, STOP_SEQUENCE; Baidu ERNIE: normal; llama.cpp: eos.
	case "stop", "end_turn", "stop_sequence", "eos", "eos_token", "complete", "normal":
		return finishMeaning{Reason: FinishStop}
	// OpenAI: tool_calls, function_call (legacy); Anthropic: tool_use;
	// Cohere: TOOL_CALL.
	case "tool_calls", "function_call", "tool_use", "tool_call":
		return finishMeaning{Reason: FinishToolCalls}
	// OpenAI: length; Anthropic and Gemini native: max_tokens / MAX_TOKENS;
	// Mistral: model_length, the model's context ran out (Mistral OpenAPI
	// finish_reason enum, laravel/ai#955); Anthropic and Zhipu GLM:
	// model_context_window_exceeded; Cohere: MAX_TOKENS.
	case "length", "max_tokens", "model_length", "model_context_window_exceeded", "max_output_tokens":
		return finishMeaning{Reason: FinishLength}
	// OpenAI/Azure: content_filter; Gemini: SAFETY, RECITATION, BLOCKLIST,
	// PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, LANGUAGE, MODEL_ARMOR (Vertex
	// AI FinishReason reference); Zhipu GLM: sensitive; Anthropic: refusal;
	// Bedrock: guardrail_intervened, content_filtered; Cohere: ERROR_TOXIC.
	case "content_filter", "safety", "recitation", "blocklist", "prohibited_content", "spii",
		"image_safety", "language", "model_armor", "sensitive", "refusal",
		"guardrail_intervened", "content_filtered", "error_toxic":
		return finishMeaning{Reason: FinishContentFilter}
	// Failures reported as a finish: Mistral and OpenRouter: error; vLLM
	// and SGLang: abort, an engine-side abort sent with HTTP 200 and [DONE]
	// (vllm-project/vllm#57082); Zhipu GLM: network_error; DeepSeek:
	// insufficient_system_resource; Gemini: MALFORMED_FUNCTION_CALL,
	// UNEXPECTED_TOOL_CALL; Cohere: ERROR, ERROR_LIMIT, USER_CANCEL.
	case "error", "abort", "aborted", "network_error", "insufficient_system_resource",
		"malformed_function_call", "unexpected_tool_call", "error_limit", "user_cancel", "failed":
		return finishMeaning{Reason: FinishError, Fail: ClassRetryable,
			Detail: "the provider ended the stream with finish_reason \"" + sent + "\""}
	}
	// Anthropic pause_turn, Gemini OTHER and FINISH_REASON_UNSPECIFIED, and
	// every value not listed: not known to be complete.
	return finishMeaning{Reason: FinishUnknown}
}

// finishValue reads a choice's finish_reason: a string (the usual form), or
// an object with a "type" or "reason" member (SGLang's native
// {"type":"length","length":N}, passed through by some gateways). null, ""
// and the string "null" (DashScope's native stream sends it on every
// intermediate chunk) mean "not finished".
type finishValue string

// UnmarshalJSON implements json.Unmarshaler.
func (f *finishValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var s lenientString
	switch {
	case len(b) == 0:
		return nil
	case b[0] == '{':
		var obj struct {
			Type   lenientString `json:"type"`
			Reason lenientString `json:"reason"`
		}
		if json.Unmarshal(b, &obj) == nil {
			s = obj.Type
			if s == "" {
				s = obj.Reason
			}
		}
	default:
		if err := s.UnmarshalJSON(b); err != nil {
			return err
		}
	}
	if strings.EqualFold(strings.TrimSpace(string(s)), "null") {
		s = ""
	}
	*f = finishValue(strings.TrimSpace(string(s)))
	return nil
}
