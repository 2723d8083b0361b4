package llm

import (
	"bytes"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"ms wins", map[string]string{"retry-after-ms": "250", "retry-after": "3"}, 250 * time.Millisecond},
		{"seconds", map[string]string{"retry-after": "3", "x-ratelimit-reset-tokens": "9s"}, 3 * time.Second},
		{"fractional seconds", map[string]string{"retry-after": "1.5"}, 1500 * time.Millisecond},
		{"http date", map[string]string{"retry-after": now.Add(42 * time.Second).Format(http.TimeFormat)}, 42 * time.Second},
		{"date in the past", map[string]string{"retry-after": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"reset of the exhausted limit", map[string]string{
			"x-ratelimit-remaining-requests": "10", "x-ratelimit-reset-requests": "6m0s",
			"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "2.4s",
		}, 2400 * time.Millisecond},
		{"longest reset when none exhausted", map[string]string{"x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "1m30s"}, 90 * time.Second},
		{"reset in seconds", map[string]string{"x-ratelimit-reset": "7"}, 7 * time.Second},
		{"reset as unix time", map[string]string{"x-ratelimit-reset-requests": "1767366305"}, 60 * time.Second},
		{"reset as unix milliseconds (OpenRouter)", map[string]string{"x-ratelimit-reset": "1767366305000"}, 60 * time.Second},
		{"garbage", map[string]string{"retry-after": "soon"}, 0},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		f    errorFacts
		want ErrorClass
	}{
		{"quota beats 429", errorFacts{Status: 429, Code: "insufficient_quota"}, ClassFatal},
		{"rate limit type", errorFacts{Status: 400, Type: "throttling_exception"}, ClassRetryable},
		{"numeric 429 code in stream", errorFacts{InStream: true, Code: "429"}, ClassRetryable},
		// Anthropic's error types that have one status decide in a stream
		// as that status does (docs.claude.com, "Errors": HTTP errors).
		{"in-stream authentication_error", errorFacts{InStream: true, Type: "authentication_error", Message: "invalid x-api-key"}, ClassFatal},
		{"in-stream permission_error", errorFacts{InStream: true, Type: "permission_error", Message: "Your API key does not have permission to use the specified resource."}, ClassFatal},
		{"in-stream billing_error", errorFacts{InStream: true, Type: "billing_error", Message: "Your credit balance is too low"}, ClassFatal},
		{"in-stream request_too_large", errorFacts{InStream: true, Type: "request_too_large", Message: "Request exceeds the maximum allowed number of bytes."}, ClassContextOverflow},
		{"in-stream overloaded_error stays retryable", errorFacts{InStream: true, Type: "overloaded_error", Message: "Overloaded"}, ClassRetryable},
		{"in-stream invalid_request_error with api_error code stays retryable (case 13)", errorFacts{InStream: true, Code: "api_error", Type: "invalid_request_error", Message: "Internal server error"}, ClassRetryable},
		{"in-stream error without signals is retried", errorFacts{InStream: true, Message: "something happened"}, ClassRetryable},
		{"in-stream invalid_request_error code is fatal", errorFacts{InStream: true, Code: "invalid_request_error", Type: "invalid_request_error",
			Message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."}, ClassFatal},
		{"in-stream invalid_request_error saying internal server error stays retryable", errorFacts{InStream: true, Type: "invalid_request_error",
			Message: "Internal server error"}, ClassRetryable},
		{"bedrock throttling wording", errorFacts{Status: 400, Message: "Too many tokens, please wait before trying again."}, ClassRetryable},
		{"overflow before rate limit (Groq 413)", errorFacts{Status: 413, Code: "rate_limit_exceeded", Type: "tokens",
			Message: "Request too large for model `llama-3.3-70b-versatile` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again."}, ClassContextOverflow},
		{"TPM limit that fits later is a rate limit", errorFacts{Status: 429, Code: "rate_limit_exceeded",
			Message: "Rate limit reached for model on tokens per minute (TPM): Limit 6000, Used 5034, Requested 1443. Please try again in 4.77s."}, ClassRetryable},
		{"overflow code", errorFacts{Status: 400, Code: "context_length_exceeded"}, ClassContextOverflow},
		{"context window wording", errorFacts{Status: 400, Message: "Input exceeds the context window of this model"}, ClassContextOverflow},
		{"overflow beats 5xx", errorFacts{Status: 500, Message: "prompt is too long: 210000 tokens > 200000 maximum"}, ClassContextOverflow},
		{"408", errorFacts{Status: 408}, ClassRetryable},
		{"529", errorFacts{Status: 529}, ClassRetryable},
		{"api_error on 400", errorFacts{Status: 400, Code: "api_error"}, ClassRetryable},
		{"overloaded text", errorFacts{Status: 400, Message: "Overloaded"}, ClassRetryable},
		{"401", errorFacts{Status: 401, Message: "bad key"}, ClassFatal},
		{"404", errorFacts{Status: 404}, ClassFatal},
		{"in-stream 400 code", errorFacts{InStream: true, Code: "400", Message: "bad"}, ClassFatal},
		{"in-stream no signal", errorFacts{InStream: true, Message: "something"}, ClassRetryable},
		{"in-stream 502 code", errorFacts{InStream: true, Code: "502"}, ClassRetryable},
	}
	for _, tt := range tests {
		if got := classify(tt.f).Class; got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestParseErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want errorBody
	}{
		{`{"error":{"message":"m","type":"t","code":429}}`, errorBody{Code: "429", Type: "t", Message: "m"}},
		{`[{"error":{"code":400,"message":"m","status":"INVALID_ARGUMENT"}}]`, errorBody{Code: "400", Type: "INVALID_ARGUMENT", Message: "m"}},
		{`{"error":"Overloaded"}`, errorBody{Message: "Overloaded"}},
		{`{"error":{"message":["a","b"]}}`, errorBody{Message: "a, b"}},
		{`{"object":"error","message":"m","type":"invalid_request_error","code":null}`, errorBody{Type: "invalid_request_error", Message: "m"}},
		{`{"detail":"Not Found"}`, errorBody{Message: "Not Found"}},
		{`{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"m\",\"type\":\"t\",\"code\":\"c\"}}"}}}`,
			errorBody{Code: "c", Type: "t", Message: "Provider returned error: m"}},
		{`{"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"upstream timed out"}}}`,
			errorBody{Code: "502", Message: "Provider returned error: upstream timed out"}},
		{`bad gateway`, errorBody{Message: "bad gateway"}},
		{``, errorBody{}},
	}
	for _, tt := range tests {
		if got := parseErrorBody([]byte(tt.body)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.body, got, tt.want)
		}
	}
}

func TestSSELongLineAndFacts(t *testing.T) {
	t.Parallel()
	long := `{"choices":[{"delta":{"content":"` + strings.Repeat("x", 300_000) + `"}}]}`
	in := ": keep-alive\n\n: keep-alive\n\nid: 7\nretry: 10\ndata: " + long + "\r\n\r\ndata: [DONE]\n\ndata: ignored\n"
	var facts streamFacts
	activity := 0
	out, err := io.ReadAll(newSSEReader(io.NopCloser(bytes.NewReader([]byte(in))), &facts, func() { activity++ }))
	if err != nil {
		t.Fatal(err)
	}
	want := "data: " + long + "\n\ndata: [DONE]\n\n"
	if string(out) != want {
		t.Errorf("framed output differs (len %d, want %d)", len(out), len(want))
	}
	if !facts.Done || facts.Comments != 2 || facts.Events != 1 || activity == 0 {
		t.Errorf("facts %+v, activity %d", facts, activity)
	}
}

// TestBodyRateLimitHeaders: OpenRouter copies the upstream's rate-limit
// headers into error.metadata.headers; their reset is the wait when the
// response itself names none, and a real header still wins.
func TestBodyRateLimitHeaders(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	reset := strconv.FormatInt(now.Add(25*time.Second).UnixMilli(), 10)
	body := `{"error":{"message":"Rate limit exceeded: free-models-per-min. ","code":429,"metadata":{"headers":` +
		`{"X-RateLimit-Limit":"20","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"` + reset + `"},"provider_name":null}}}`
	b := parseErrorBody([]byte(body))
	facts := errorFacts{Status: 429, Code: b.Code, Message: b.Message, Now: now, BodyHeader: b.Header}
	if e := classify(facts); e.Class != ClassRetryable || e.RetryAfter != 25*time.Second {
		t.Errorf("body headers: %s after %v, want retryable after 25s", e.Class, e.RetryAfter)
	}
	facts.Header = http.Header{"Retry-After": {"3"}}
	if e := classify(facts); e.RetryAfter != 3*time.Second {
		t.Errorf("with Retry-After 3: waits %v, want 3s", e.RetryAfter)
	}
}
