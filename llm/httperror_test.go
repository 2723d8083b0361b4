package llm_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// statusServer answers every request with status and body, counting calls.
func statusServer(t *testing.T, status int, contentType, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// firstError streams one request and returns its *llm.Error.
func firstError(t *testing.T, p llm.Streamer) *llm.Error {
	t.Helper()
	for ev := range p.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}) {
		var e *llm.Error
		if ev.Err != nil && errors.As(ev.Err, &e) {
			return e
		}
	}
	t.Fatal("the call did not fail")
	return nil
}

// TestHTTPErrorNamesRequest checks on every wire that an HTTP error names
// its method and URL (no user info), hints at /v1 for an OpenAI-compatible
// base URL without a version, does not retry 501 and reduces HTML pages.
func TestHTTPErrorNamesRequest(t *testing.T) {
	t.Parallel()
	const page = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>b{}</style></head>` +
		`<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>`
	cases := []struct {
		name        string
		wire        llm.Wire
		status      int
		ctype, body string
		base        string // appended to the server's URL
		path        string // the request path the message names
		class       llm.ErrorClass
		says        []string
		hint        bool
	}{
		{"chat 404 no version", llm.WireChat, 404, "text/plain", "404 page not found", "", "/chat/completions",
			llm.ClassFatal, []string{"404 page not found"}, true},
		{"chat 404 with v1", llm.WireChat, 404, "text/plain", "404 page not found", "/v1", "/v1/chat/completions",
			llm.ClassFatal, []string{"404 page not found"}, false},
		{"responses 404 no version", llm.WireResponses, 404, "text/plain", "not found", "/api", "/api/responses",
			llm.ClassFatal, []string{"not found"}, true},
		{"anthropic 404", llm.WireAnthropic, 404, "text/plain", "not found", "", "/v1/messages",
			llm.ClassFatal, []string{"not found"}, false},
		{"chat 501", llm.WireChat, 501, "text/plain", "not implemented", "/v1", "/v1/chat/completions",
			llm.ClassFatal, []string{"HTTP 501", "not implemented"}, false},
		{"responses 505", llm.WireResponses, 505, "text/plain", "no", "/v1", "/v1/responses",
			llm.ClassFatal, []string{"HTTP 505"}, false},
		{"anthropic 501", llm.WireAnthropic, 501, "text/plain", "not implemented", "", "/v1/messages",
			llm.ClassFatal, []string{"HTTP 501"}, false},
		{"chat 503 still retried", llm.WireChat, 503, "text/plain", "busy", "/v1", "/v1/chat/completions",
			llm.ClassRetryable, []string{"HTTP 503"}, false},
		{"chat html", llm.WireChat, 502, "text/html", page, "/v1", "/v1/chat/completions",
			llm.ClassRetryable, []string{"HTML page: 502 Bad Gateway"}, false},
		{"responses html", llm.WireResponses, 502, "text/html", page, "/v1", "/v1/responses",
			llm.ClassRetryable, []string{"HTML page: 502 Bad Gateway"}, false},
		{"anthropic html", llm.WireAnthropic, 502, "text/html", page, "", "/v1/messages",
			llm.ClassRetryable, []string{"HTML page: 502 Bad Gateway"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := statusServer(t, c.status, c.ctype, c.body)
			withUser := strings.Replace(srv.URL, "http://", "http://user:sekrit@", 1) + c.base
			p, err := llm.NewWire(c.wire, llm.Config{BaseURL: withUser, APIKey: "sk-test"})
			if err != nil {
				t.Fatal(err)
			}
			e := firstError(t, p)
			msg := e.Error()
			if e.Class != c.class {
				t.Errorf("class %s, want %s: %s", e.Class, c.class, msg)
			}
			if want := "from POST " + srv.URL + c.path + ":"; !strings.Contains(msg, want) {
				t.Errorf("message does not name %q: %s", want, msg)
			}
			for _, s := range c.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message lacks %q: %s", s, msg)
				}
			}
			if strings.Contains(msg, "sekrit") || strings.Contains(msg, "<") {
				t.Errorf("message carries user info or markup: %s", msg)
			}
			hint := "try --base-url " + srv.URL + c.base + "/v1"
			if got := strings.Contains(msg, hint); got != c.hint {
				t.Errorf("hint %q shown %v, want %v: %s", hint, got, c.hint, msg)
			}
		})
	}
}
