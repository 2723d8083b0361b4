package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Personality is a fake provider that rejects what the real provider
// rejects, with the status and error body that provider sends, so a
// request-side regression fails a test. Check returns the rejection for a
// request, or ok=false when the provider would accept it.
type Personality struct {
	Name string
	// Source says where the rules and bodies come from.
	Source string
	check  func(req RecordedRequest) (Reply, bool)
}

// Check judges one request: the rejection and true, or false when the
// provider accepts it.
func (p Personality) Check(req RecordedRequest) (Reply, bool) { return p.check(req) }

// NewPersonalityServer starts a server that answers a request the
// personality rejects with the rejection, and every accepted request with
// the next scripted reply (a rejection uses no reply). Rejections lists
// what was rejected.
func NewPersonalityServer(t testing.TB, p Personality, replies ...Reply) *Server {
	t.Helper()
	return newServer(t, replies, nil, &p)
}

// Rejections returns the error bodies the personality answered with, in
// order.
func (s *Server) Rejections() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.rejections...)
}

// judge applies the personality, if any, and records a rejection.
func (s *Server) judge(rec RecordedRequest) (Reply, bool) {
	if s.personality == nil {
		return Reply{}, false
	}
	r, bad := s.personality.Check(rec)
	if bad {
		s.mu.Lock()
		s.rejections = append(s.rejections, string(r.Body))
		s.mu.Unlock()
	}
	return r, bad
}

func jsonReply(status int, v any) Reply {
	b, _ := json.Marshal(v)
	return Reply{Status: status, Body: b, Header: map[string]string{"Content-Type": "application/json"}}
}

// modelBase is the model name without a vendor/ prefix, lower-cased.
func modelBase(req RecordedRequest) string {
	m, _ := req.Body["model"].(string)
	m = strings.ToLower(m)
	return m[strings.LastIndex(m, "/")+1:]
}

// OpenAI rejects sampling parameters and max_tokens on its reasoning
// models (o1, o3, o4, gpt-5), and reasoning_effort on the others (gpt-4.1,
// gpt-4o), with the invalid_request_error bodies of the API
// ("Unsupported value: 'temperature' does not support 0.2 with this
// model. Only the default (1) value is supported.").
func OpenAI() Personality {
	return Personality{Name: "openai", Source: "OpenAI reasoning models guide; API error bodies unsupported_value / unsupported_parameter",
		check: func(req RecordedRequest) (Reply, bool) {
			base := modelBase(req)
			if _, ok := req.Body["reasoning_effort"]; ok && (strings.HasPrefix(base, "gpt-4.1") || strings.HasPrefix(base, "gpt-4o")) {
				return openAIError("Unsupported parameter: 'reasoning_effort' is not supported with this model.",
					"reasoning_effort", "unsupported_parameter"), true
			}
			if !strings.HasPrefix(base, "o1") && !strings.HasPrefix(base, "o3") && !strings.HasPrefix(base, "o4") && !strings.HasPrefix(base, "gpt-5") {
				return Reply{}, false
			}
			if t, ok := req.Body["temperature"].(float64); ok && t != 1 {
				return openAIError(fmt.Sprintf("Unsupported value: 'temperature' does not support %v with this model. Only the default (1) value is supported.", t),
					"temperature", "unsupported_value"), true
			}
			for _, k := range []string{"top_p", "max_tokens"} {
				if _, ok := req.Body[k]; ok {
					return openAIError(fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", k), k, "unsupported_parameter"), true
				}
			}
			return Reply{}, false
		}}
}

func openAIError(msg, param, code string) Reply {
	return jsonReply(http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": param, "code": code}})
}

var mistralID = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)

// Mistral rejects tool-call ids that are not 9 alphanumerics and a user
// message right after a tool message, with its {"object":"error",…} body.
func Mistral() Personality {
	return Personality{Name: "mistral", Source: "Mistral API errors: invalid_function_call 3280 (\"Tool call id was … but must be a-z, A-Z, 0-9, with a length of 9.\"), invalid_request_message_order 3230",
		check: func(req RecordedRequest) (Reply, bool) {
			msgs := req.Messages()
			for i, m := range msgs {
				for _, id := range toolCallIDs(m) {
					if !mistralID.MatchString(id) {
						return mistralError("Tool call id was "+id+" but must be a-z, A-Z, 0-9, with a length of 9.", "invalid_function_call", "3280"), true
					}
				}
				if i > 0 && m["role"] == "user" && msgs[i-1]["role"] == "tool" {
					return mistralError("Unexpected role 'user' after role 'tool'", "invalid_request_message_order", "3230"), true
				}
			}
			return Reply{}, false
		}}
}

func mistralError(msg, typ, code string) Reply {
	return jsonReply(http.StatusBadRequest, map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": code})
}

// toolCallIDs returns the ids a message carries: its calls' and the one it
// answers.
func toolCallIDs(m map[string]any) []string {
	var ids []string
	calls, _ := m["tool_calls"].([]any)
	for _, c := range calls {
		if cm, ok := c.(map[string]any); ok {
			id, _ := cm["id"].(string)
			ids = append(ids, id)
		}
	}
	if id, ok := m["tool_call_id"].(string); ok {
		ids = append(ids, id)
	}
	return ids
}

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// anthropicProblem returns Anthropic's message for what it rejects in a
// request: empty text content (an empty string becomes an empty text
// block) and tool-use ids outside [a-zA-Z0-9_-].
func anthropicProblem(req RecordedRequest) string {
	msgs := req.Messages()
	for i, m := range msgs {
		for _, id := range toolCallIDs(m) {
			if !anthropicID.MatchString(id) {
				return fmt.Sprintf("messages.%d.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", i)
			}
		}
		c, present := m["content"]
		text, isText := c.(string)
		switch {
		case isText && strings.TrimSpace(text) == "":
			return fmt.Sprintf("messages.%d: text content blocks must be non-empty", i)
		case !present && m["tool_calls"] == nil && i != len(msgs)-1:
			return fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
	}
	return ""
}

// Anthropic is Anthropic's OpenAI-compatible endpoint: it rejects empty
// text blocks and tool ids outside [a-zA-Z0-9_-] with its
// {"type":"error","error":{"type":"invalid_request_error",…}} body.
func Anthropic() Personality {
	return Personality{Name: "anthropic", Source: "Anthropic Messages API validation errors (text content blocks must be non-empty; tool_use.id pattern)",
		check: func(req RecordedRequest) (Reply, bool) {
			if p := anthropicProblem(req); p != "" {
				return anthropicError(p), true
			}
			return Reply{}, false
		}}
}

func anthropicError(msg string) Reply {
	return jsonReply(http.StatusBadRequest, map[string]any{"type": "error",
		"error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

// OpenRouterAnthropic is a Claude model behind OpenRouter: Anthropic's
// rejections, wrapped the way OpenRouter passes an upstream error on
// ("Provider returned error" with the raw body in metadata).
func OpenRouterAnthropic() Personality {
	return Personality{Name: "openrouter-anthropic", Source: "OpenRouter errors docs (metadata.raw, provider_name); Anthropic validation errors",
		check: func(req RecordedRequest) (Reply, bool) {
			p := anthropicProblem(req)
			if p == "" {
				return Reply{}, false
			}
			raw := anthropicError(p).Body
			return jsonReply(http.StatusBadRequest, map[string]any{"error": map[string]any{
				"message": "Provider returned error", "code": 400,
				"metadata": map[string]any{"raw": string(raw), "provider_name": "Anthropic"}}}), true
		}}
}
