package llmtest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// ResponsesAPI is the Responses API's personality: it rejects what the
// API rejects, with its status and {"error": {…}} body. Wordings are the
// API's as reported against the OpenAI SDKs and Agents SDK (store: false
// item references, tool call pairing, the moved messages parameter).
func ResponsesAPI() Personality {
	return Personality{Name: "openai-responses", Source: "OpenAI Responses API errors (openai-agents-python, openai-go issue reports)",
		check: responsesCheck}
}

func responsesCheck(req RecordedRequest) (Reply, bool) {
	bad := func(param, code, msg string, a ...any) (Reply, bool) {
		return OpenAIError(http.StatusBadRequest, "invalid_request_error", param, code, fmt.Sprintf(msg, a...)), true
	}
	if !strings.HasSuffix(req.Path, "/v1/responses") {
		return OpenAIError(http.StatusNotFound, "invalid_request_error", "", "", "Invalid URL (POST "+req.Path+")"), true
	}
	if !strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ") {
		return OpenAIError(http.StatusUnauthorized, "invalid_request_error", "", "",
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."), true
	}
	if req.Body == nil {
		return bad("", "", "We could not parse the JSON body of your request.")
	}
	if _, ok := req.Body["messages"]; ok {
		return bad("messages", "unsupported_parameter", "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'. "+
			"Try again with the new parameter. See the API documentation for more information: https://platform.openai.com/docs/api-reference/responses/create.")
	}
	stored, _ := req.Body["store"].(bool)
	if _, set := req.Body["store"]; !set {
		stored = true
	}
	items, _ := req.Body["input"].([]any)
	calls, outputs := map[string]bool{}, map[string]bool{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		typ, _ := m["type"].(string)
		id, _ := m["id"].(string)
		if !stored && id != "" && (typ != "reasoning" || m["encrypted_content"] == nil) {
			return OpenAIError(http.StatusNotFound, "invalid_request_error", "input", "", fmt.Sprintf("Item with id '%s' not found. "+
				"Items are not persisted when `store` is set to false. Try again with `store` set to `true`, or remove this item from your input.", id)), true
		}
		callID, _ := m["call_id"].(string)
		switch typ {
		case "function_call":
			calls[callID] = true
		case "function_call_output":
			if !calls[callID] {
				return bad("input", "", "No tool call found for function call output with call_id %s.", callID)
			}
			outputs[callID] = true
		}
	}
	for id := range calls {
		if !outputs[id] {
			return bad("input", "", "No tool output found for function call %s.", id)
		}
	}
	return Reply{}, false
}

// OpenAICache is OpenAI's automatic prompt caching rule (platform.openai.com,
// "Prompt caching"): a request reads the longest prefix, in whole steps
// of 128 tokens from 1024 on, that an earlier request began with; the
// prompt is tools, instructions, then the input items. Tokens are counted
// as JSON bytes / 4.
type OpenAICache struct {
	mu   sync.Mutex
	seen map[[32]byte]bool
}

// Usage returns the request's input and cached tokens, and records its
// prefixes.
func (c *OpenAICache) Usage(body map[string]any) (input, cached int) {
	var stream []byte
	for _, key := range []string{"tools", "instructions"} {
		if v, ok := body[key]; ok {
			b, _ := json.Marshal(v)
			stream = append(stream, b...)
		}
	}
	items, _ := body["input"].([]any)
	if text, ok := body["input"].(string); ok {
		items = []any{map[string]any{"role": "user", "content": text}} // a string is one user message
	}
	for _, it := range items {
		b, _ := json.Marshal(it)
		stream = append(stream, b...)
	}
	input = (len(stream) + 3) / 4
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[[32]byte]bool{}
	}
	h := sha256.New() // one running hash, summed at each 128-token step
	done := 0
	for tokens := 1024; tokens*4 <= len(stream); tokens += 128 {
		h.Write(stream[done : tokens*4])
		done = tokens * 4
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		if c.seen[sum] {
			cached = tokens
		}
		c.seen[sum] = true
	}
	return input, cached
}

// ResponsesServer is a fake Responses endpoint: it rejects what the API
// rejects (ResponsesAPI), answers the i-th accepted request with
// script[i], and fills a turn's usage by OpenAI's caching rule (Cache).
type ResponsesServer struct {
	*Server
	Cache  *OpenAICache
	mu     sync.Mutex
	usages []ResponsesUsage
}

// ResponsesStep is one scripted answer: a turn, or a raw reply when Raw is
// set.
type ResponsesStep struct {
	Turn ResponsesTurn
	Raw  *Reply
}

// NewResponsesServer starts the fake with its script; requests beyond it
// fail the test.
func NewResponsesServer(t testing.TB, script ...ResponsesStep) *ResponsesServer {
	t.Helper()
	s := &ResponsesServer{Cache: &OpenAICache{}}
	p := ResponsesAPI()
	s.Server = newScriptServer(t, &p, len(script), func(i int, req RecordedRequest) Reply {
		if i >= len(script) {
			return OpenAIError(400, "invalid_request_error", "", "", "llmtest: unscripted request")
		}
		if script[i].Raw != nil {
			return *script[i].Raw
		}
		turn := script[i].Turn
		turn.Usage.InputTokens, turn.Usage.CachedTokens = s.Cache.Usage(req.Body)
		s.mu.Lock()
		s.usages = append(s.usages, turn.Usage)
		s.mu.Unlock()
		return turn.Reply()
	})
	return s
}

// Usages returns the usages reported so far.
func (s *ResponsesServer) Usages() []ResponsesUsage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ResponsesUsage(nil), s.usages...)
}
