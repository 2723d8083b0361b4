package llmtest

import (
	"fmt"
	"net/http"
	"strings"
)

// AnthropicMessages is the Messages API's personality: it rejects what the API
// rejects, with its status and error body ({"type":"error","error":{…}}).
// Wordings are the API's as returned to its SDKs (anthropic-sdk-go and
// anthropic-sdk-python issue reports, the extended-thinking and
// prompt-caching docs).
func AnthropicMessages() Personality {
	return Personality{Name: "anthropic-messages", Source: "Anthropic Messages API errors (platform.claude.com/docs/en/api/errors)",
		check: anthropicCheck}
}

func anthropicCheck(req RecordedRequest) (Reply, bool) {
	bad := func(msg string, a ...any) (Reply, bool) {
		return AnthropicError(http.StatusBadRequest, "invalid_request_error", fmt.Sprintf(msg, a...)), true
	}
	if !strings.HasSuffix(req.Path, "/v1/messages") {
		return AnthropicError(http.StatusNotFound, "not_found_error", "Not Found"), true
	}
	// The API takes the key as x-api-key or as a bearer token (which
	// anthropic-sdk-go v2 sends).
	if req.Header.Get("x-api-key") == "" && !strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ") {
		return AnthropicError(http.StatusUnauthorized, "authentication_error", "x-api-key header is required"), true
	}
	if req.Header.Get("anthropic-version") == "" {
		return bad("anthropic-version: header is required")
	}
	if req.Body == nil {
		return bad("There was an error parsing the body of your request.")
	}
	if _, ok := req.Body["messages"]; !ok {
		return bad("messages: Field required")
	}
	if _, ok := req.Body["max_tokens"]; !ok {
		return bad("max_tokens: Field required")
	}
	msgs := req.Messages()
	if n := countCacheControl(req.Body, msgs); n > 4 {
		return bad("A maximum of 4 blocks with cache_control may be provided. Found %d.", n)
	}
	var prevUses []string // tool_use ids of the previous assistant message
	for i, m := range msgs {
		role, _ := m["role"].(string)
		if role != "user" && role != "assistant" {
			return bad("messages: Unexpected role %q. The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.", role)
		}
		blocks := contentBlocks(m)
		var uses, results []string
		for j, b := range blocks {
			switch b["type"] {
			case "text":
				if s, _ := b["text"].(string); strings.TrimSpace(s) == "" {
					return bad("messages: text content blocks must be non-empty")
				}
			case "thinking":
				sig, _ := b["signature"].(string)
				if sig == "" {
					return bad("messages.%d.content.%d.thinking.signature: Field required", i, j)
				}
				// A signature of the fake's own binds the text, as the API's does.
				if text, _ := b["thinking"].(string); strings.HasPrefix(sig, signaturePrefix) && sig != ThinkingSignature(text) {
					return bad("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			case "tool_use":
				id, _ := b["id"].(string)
				uses = append(uses, id)
			case "tool_result":
				id, _ := b["tool_use_id"].(string)
				if !contains(prevUses, id) {
					return bad("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
						"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, id)
				}
				results = append(results, id)
			}
		}
		if len(prevUses) > 0 {
			var missing []string
			for _, id := range prevUses {
				if role != "user" || !contains(results, id) {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				return bad("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
					"Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
			}
		}
		prevUses = uses
	}
	return Reply{}, false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// contentBlocks is a message's content as blocks (a string is one text
// block).
func contentBlocks(m map[string]any) []map[string]any {
	switch c := m["content"].(type) {
	case string:
		return []map[string]any{{"type": "text", "text": c}}
	case []any:
		var out []map[string]any
		for _, b := range c {
			if bm, ok := b.(map[string]any); ok {
				out = append(out, bm)
			}
		}
		return out
	}
	return nil
}

// countCacheControl counts blocks with cache_control in tools, system and
// messages.
func countCacheControl(body map[string]any, msgs []map[string]any) int {
	n := 0
	for _, key := range []string{"tools", "system"} {
		list, _ := body[key].([]any)
		for _, b := range list {
			if bm, ok := b.(map[string]any); ok && bm["cache_control"] != nil {
				n++
			}
		}
	}
	for _, m := range msgs {
		for _, b := range contentBlocks(m) {
			if b["cache_control"] != nil {
				n++
			}
		}
	}
	return n
}
