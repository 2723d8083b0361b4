package llm

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// errorBody is a provider error body, read leniently.
type errorBody struct {
	Code    string // normalised to a string: 429, "429" and "rate_limit" all fit
	Type    string
	Param   string // the request member the error is about (OpenAI), "" when none
	Message string
	// RetryDelay is Gemini's RetryInfo.retryDelay from the error details; 0
	// when none.
	RetryDelay time.Duration
	// QuotaPeriod is the window of an exhausted quota named in Gemini's
	// details ("second", "minute", "day"), "" when none is named.
	QuotaPeriod string
	// Header holds rate-limit headers a gateway copied into the body
	// (OpenRouter's error.metadata.headers); nil when none.
	Header http.Header
}

// parseErrorBody reads an HTTP error body of any shape: {"error": {...}},
// [{"error": {...}}] (Gemini), {"error": "text"}, a top-level
// {"message", "type", "code"} (Mistral), {"detail": "..."} or plain text.
func parseErrorBody(body []byte) errorBody {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(body, &list) == nil && len(list) > 0 {
			return parseErrorBody(list[0])
		}
	}
	var top map[string]json.RawMessage
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &top) != nil {
		if text, ok := htmlExcerpt(body); ok {
			return errorBody{Message: text}
		}
		return errorBody{Message: truncate(string(body), 2000)}
	}
	if v, ok := top["error"]; ok && string(v) != "null" {
		return parseErrorValue(v)
	}
	b := errorFields(top)
	if b.Message == "" {
		b.Message = rawText(top["detail"])
	}
	if b.Message == "" {
		b.Message = truncate(string(body), 2000)
	}
	return b
}

// parseErrorValue reads the value of an "error" member: an object or a
// string (or anything else, as text).
func parseErrorValue(v json.RawMessage) errorBody {
	v = bytes.TrimSpace(v)
	var obj map[string]json.RawMessage
	if len(v) > 0 && v[0] == '{' && json.Unmarshal(v, &obj) == nil {
		b := errorFields(obj)
		if b.Message == "" {
			b.Message = truncate(string(v), 2000)
		}
		return b
	}
	return errorBody{Message: rawText(v)}
}

func errorFields(obj map[string]json.RawMessage) errorBody {
	b := errorBody{
		Code:    rawText(obj["code"]),
		Type:    rawText(obj["type"]),
		Param:   rawText(obj["param"]),
		Message: rawText(obj["message"]),
	}
	if b.Type == "" {
		b.Type = rawText(obj["status"]) // Gemini: "RESOURCE_EXHAUSTED"
	}
	if d, ok := obj["details"]; ok {
		b.RetryDelay, b.QuotaPeriod = googleDetails(d)
	}
	if m, ok := obj["metadata"]; ok {
		b.Header = metadataHeaders(m)
		b.upstream(m)
	}
	if b.Message == "" {
		var list []string
		if json.Unmarshal(obj["message"], &list) == nil {
			b.Message = strings.Join(list, ", ")
		}
	}
	return b
}

// upstream merges the upstream provider's error that OpenRouter wraps as
// a string in metadata.raw under the message "Provider returned error":
// its message is appended, and its code, type and retry hints fill what
// the wrapper lacks (a numeric code is the wrapper's status, so the
// upstream's named code wins), so its overflow, quota or rate-limit
// wording is judged.
func (b *errorBody) upstream(metadata json.RawMessage) {
	var m struct {
		Raw json.RawMessage `json:"raw"`
	}
	if json.Unmarshal(metadata, &m) != nil {
		return
	}
	raw := rawText(m.Raw)
	if raw == "" {
		return
	}
	in := parseErrorBody([]byte(raw))
	if in.Message != "" && !strings.Contains(b.Message, in.Message) {
		b.Message = strings.TrimSpace(b.Message + ": " + in.Message)
	}
	if _, err := strconv.Atoi(in.Code); (in.Code != "" && err != nil) || b.Code == "" {
		b.Code = in.Code // a named upstream code, or any when the wrapper has none
	}
	b.Type = cmp.Or(b.Type, in.Type)
	b.RetryDelay = cmp.Or(b.RetryDelay, in.RetryDelay)
	b.QuotaPeriod = cmp.Or(b.QuotaPeriod, in.QuotaPeriod)
}

// metadataHeaders reads the headers OpenRouter copies into an error's
// metadata ({"headers": {"X-RateLimit-Reset": "1788825600000", …}});
// nil when there are none.
func metadataHeaders(raw json.RawMessage) http.Header {
	var m struct {
		Headers map[string]json.RawMessage `json:"headers"`
	}
	if json.Unmarshal(raw, &m) != nil || len(m.Headers) == 0 {
		return nil
	}
	h := http.Header{}
	for k, v := range m.Headers {
		if s := rawText(v); s != "" {
			h.Set(k, s)
		}
	}
	return h
}

// rawText returns a JSON string's value, a number's text, or "" for
// anything else.
func rawText(v json.RawMessage) string {
	var s lenientString
	if len(v) == 0 || s.UnmarshalJSON(v) != nil {
		return ""
	}
	return string(s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// errorFacts is everything classification looks at.
type errorFacts struct {
	Status   int // HTTP status; 0 in a stream
	InStream bool
	Code     string
	Type     string
	Message  string
	Header   http.Header
	Now      time.Time
	// RetryDelay, QuotaPeriod and BodyHeader come from the body (errorBody).
	RetryDelay  time.Duration
	QuotaPeriod string
	BodyHeader  http.Header
}

// classify applies the README rules in their order (status 498 is Groq's
// flex-tier capacity, a 5xx in all but number): context overflow
// first (a request that can never fit is compacted, never retried as a
// rate limit: Groq sends it as 413 rate_limit_exceeded), then an exhausted
// quota (fatal, unless its details name a per-second or per-minute window,
// which passes), rate limiting (retryable), server-side failures
// (retryable, but for 501 and its non-transient kin), other 4xx (fatal),
// and finally in-stream errors with no usable signal (retryable with a
// small cap, the caller's job). A retryable error carries the server's delay: headers first (retryAfter), then
// Gemini's RetryInfo, then a delay written in the message.
func classify(f errorFacts) *Error {
	e := &Error{Status: f.Status, Code: f.Code, Type: f.Type, Message: f.Message}
	msg, code, typ := strings.ToLower(f.Message), strings.ToLower(f.Code), strings.ToLower(f.Type)
	status := f.Status
	if status == 0 {
		if n, err := strconv.Atoi(f.Code); err == nil && n >= 400 && n <= 599 {
			status = n // an in-stream error's numeric code stands for a status
		} else {
			status = typeStatus[typ] // so does a type that has one status
		}
	}
	shortQuota := f.QuotaPeriod == "second" || f.QuotaPeriod == "minute"
	switch {
	case isOverflow(status, code, typ, msg):
		e.Class = ClassContextOverflow
	case f.QuotaPeriod == "day" || isExhausted(code, typ, msg, shortQuota):
		e.Class = ClassFatal
	case status == 429 || code == "429" || strings.Contains(typ, "rate_limit") || strings.Contains(typ, "throttl") ||
		strings.Contains(code, "rate_limit") || strings.Contains(msg, "please wait") || shortQuota:
		e.Class = ClassRetryable
	case nonTransient(status):
		e.Class = ClassFatal
	case status >= 500 || status == 408 || status == 498 || isServerSide(code) || isServerSide(typ) ||
		strings.Contains(msg, "overloaded") || strings.Contains(msg, "internal server error"):
		e.Class = ClassRetryable
	case status >= 400 || invalidInput(code) || invalidInput(typ):
		e.Class = ClassFatal
	case f.InStream:
		e.Class = ClassRetryable
	default:
		e.Class = ClassFatal
	}
	if e.Class == ClassRetryable {
		e.RetryAfter = serverDelay(f)
	}
	return e
}

// serverDelay is the wait the server asked for: headers (retryAfter), then
// headers copied into the body, then Gemini's RetryInfo, then a delay
// written in the message; 0 when none.
func serverDelay(f errorFacts) time.Duration {
	var d time.Duration
	if f.Header != nil {
		d = retryAfter(f.Header, f.Now)
	}
	if d == 0 && f.BodyHeader != nil {
		now := f.Now
		if now.IsZero() {
			now = time.Now()
		}
		d = retryAfter(f.BodyHeader, now)
	}
	if d == 0 {
		d = f.RetryDelay
	}
	if d == 0 {
		d = messageRetryDelay(f.Message)
	}
	return d
}

// typeStatus is the HTTP status of error types that come with one status
// only (Anthropic's error types, which gateways also send in a stream):
// an in-stream authentication error is as fatal as a 401.
var typeStatus = map[string]int{
	"authentication_error": 401, "invalid_api_key": 401,
	"billing_error": 402, "permission_error": 403, "permission_denied": 403,
	"not_found_error": 404, "request_too_large": 413,
}

// invalidInput reports whether an error code or type says the request
// itself is wrong, which no retry mends: OpenAI's invalid_request_error,
// and the Responses error codes invalid_prompt, invalid_image*,
// image_too_large, image_content_policy_violation and the like (API
// reference, the response object's error.code). It matters for errors in
// a stream, which carry no 4xx status.
func invalidInput(s string) bool {
	return strings.HasPrefix(s, "invalid_") || strings.Contains(s, "image")
}

func isServerSide(s string) bool {
	return s == "server_error" || s == "api_error" || s == "overloaded_error"
}

// retryAfter reads the server's delay: retry-after-ms, then retry-after
// (seconds or an HTTP date), then x-ratelimit-reset-* (Go durations such as
// "2.4s" or "1m30s", or seconds). Among several x-ratelimit-reset-* headers
// the ones whose x-ratelimit-remaining-* is 0 count; the longest wins.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("retry-after")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	return rateLimitReset(h, now)
}

func rateLimitReset(h http.Header, now time.Time) time.Duration {
	const prefix = "X-Ratelimit-Reset" // -requests, -tokens, … or bare
	var exhausted, longest time.Duration
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		if !strings.HasPrefix(ck, prefix) || len(vs) == 0 {
			continue
		}
		d, ok := parseReset(vs[0], now)
		if !ok {
			continue
		}
		longest = max(longest, d)
		if strings.TrimSpace(h.Get("X-Ratelimit-Remaining"+ck[len(prefix):])) == "0" {
			exhausted = max(exhausted, d)
		}
	}
	if exhausted > 0 {
		return exhausted
	}
	return longest
}

func parseReset(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, true
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || s < 0 {
		return 0, false
	}
	switch {
	case s > 1e12: // a Unix time in milliseconds (OpenRouter)
		return max(time.UnixMilli(int64(s)).Sub(now), 0), true
	case s > 1e9: // a Unix time
		return max(time.Unix(int64(s), 0).Sub(now), 0), true
	}
	return time.Duration(s * float64(time.Second)), true
}
