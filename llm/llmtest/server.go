// Package llmtest is an OpenAI-compatible fake Chat Completions server for
// tests. It serves scripted replies in order (SSE bodies, HTTP errors,
// delays, stalls, cut connections), builds realistic streamed replies from
// a short description (Turn), and records every request so tests can assert
// what was sent.
//
// It depends on nothing but the standard library, so any package's tests
// can use it, including the llm package's own external tests.
//
// Imports: the standard library and, for the fake Bedrock's signature
// check, aws-sdk-go-v2's SigV4 signer.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Reply is one scripted response.
type Reply struct {
	Status int               // 0: 200
	Header map[string]string // Content-Type defaults to text/event-stream (200) or application/json
	Body   []byte            // raw SSE body, or an error body

	// Delay is waited before the status line and headers are sent.
	Delay time.Duration
	// Stall, when set, sends StallAfter bytes of Body and then hangs until
	// the client gives up (or the server closes).
	Stall      bool
	StallAfter int
	// Cut, when set, sends CutAfter bytes of Body and then drops the
	// connection without ending the response.
	Cut      bool
	CutAfter int
	// Pause, when set, waits that long after PauseAfter bytes of Body and
	// then sends the rest (a slow provider that does not stall).
	Pause      time.Duration
	PauseAfter int
}

// SSE is a 200 reply with a raw Server-Sent Events body.
func SSE(body string) Reply { return Reply{Body: []byte(body)} }

// HTTPError is an error reply with the given status and body; header
// pairs are name, value, name, value, ….
func HTTPError(status int, body string, header ...string) Reply {
	r := Reply{Status: status, Body: []byte(body), Header: map[string]string{}}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header[header[i]] = header[i+1]
	}
	return r
}

// RecordedRequest is one request the server received.
type RecordedRequest struct {
	Method string
	Path   string // URL path, e.g. /v1/chat/completions
	// RawPath is the path as sent when it differs from Path's escaping.
	RawPath string
	Query   string
	Host    string // the Host header
	Header  http.Header
	Raw     []byte         // the body as received
	Body    map[string]any // the body decoded as JSON (nil if it was not JSON)
}

// Messages returns the request's messages as generic JSON objects.
func (r RecordedRequest) Messages() []map[string]any {
	list, _ := r.Body["messages"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, m := range list {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// Handler scripts replies dynamically from the request.
type Handler func(req RecordedRequest) Reply

// Server is a running fake endpoint.
type Server struct {
	t       testing.TB
	srv     *httptest.Server
	handler Handler
	done    chan struct{}

	personality *Personality // nil: accept everything
	bench       func(n int) Reply
	benchN      atomic.Int64

	mu         sync.Mutex
	replies    []Reply
	requests   []RecordedRequest
	accepted   int      // requests answered from the script
	rejections []string // bodies of the personality's rejections
}

// NewServer starts a server that answers the i-th request with replies[i]
// and fails the test when more requests arrive than were scripted. It is
// closed when the test ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	return newServer(t, replies, nil, nil)
}

// NewServerFunc starts a server that answers every request with h(req).
func NewServerFunc(t testing.TB, h Handler) *Server {
	t.Helper()
	return newServer(t, nil, h, nil)
}

// NewBenchServer starts a server that answers every request with h(n), n
// the number of requests before it, and neither decodes nor records the
// requests (Requests stays empty): in a benchmark of the client, which
// shares its process, the fake model's own work stays small. It is closed
// when the test ends.
func NewBenchServer(t testing.TB, h func(n int) Reply) *Server {
	t.Helper()
	s := &Server{t: t, done: make(chan struct{}), bench: h}
	s.start()
	return s
}

// newServer sets the script before the listener starts, so the serving
// goroutines read it without a lock.
func newServer(t testing.TB, replies []Reply, h Handler, p *Personality) *Server {
	t.Helper()
	s := &Server{t: t, done: make(chan struct{}), replies: replies, handler: h, personality: p}
	s.start()
	return s
}

// newScriptServer starts a server behind personality p that answers the
// i-th accepted request with reply(i, req); a request past the n scripted
// fails the test (reply then gives the provider's error body).
func newScriptServer(t testing.TB, p *Personality, n int, reply func(i int, req RecordedRequest) Reply) *Server {
	t.Helper()
	var next int
	var mu sync.Mutex
	return newServer(t, nil, func(req RecordedRequest) Reply {
		mu.Lock()
		i := next
		next++
		mu.Unlock()
		if i >= n {
			t.Errorf("llmtest: request %d arrived but only %d replies were scripted", i+1, n)
		}
		return reply(i, req)
	}, p)
}

// start starts the listener and closes it when the test ends.
func (s *Server) start() {
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.t.Cleanup(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// URL returns the base URL, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.bench != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		s.write(w, r, s.bench(int(s.benchN.Add(1)-1)))
		return
	}
	raw, _ := io.ReadAll(r.Body)
	rec := RecordedRequest{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.RawPath, Query: r.URL.RawQuery,
		Host: r.Host, Header: r.Header.Clone(), Raw: raw}
	if json.Unmarshal(raw, &rec.Body) != nil {
		rec.Body = nil
	}
	reply, ok := s.next(rec)
	if !ok {
		return
	}
	s.write(w, r, reply)
}

// next records the request and picks its reply.
func (s *Server) next(rec RecordedRequest) (Reply, bool) {
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	if r, rejected := s.judge(rec); rejected {
		return r, true
	}
	if s.handler != nil {
		return s.handler(rec), true
	}
	s.mu.Lock()
	s.accepted++
	n := s.accepted
	s.mu.Unlock()
	if n > len(s.replies) {
		msg := fmt.Sprintf("llmtest: request %d arrived but only %d replies were scripted", n, len(s.replies))
		s.t.Errorf("%s", msg)
		body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "llmtest_unscripted"}})
		return Reply{Status: http.StatusBadRequest, Body: body}, true // 4xx: fatal, never retried
	}
	return s.replies[n-1], true
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, reply Reply) {
	if reply.Delay > 0 && !s.wait(r, reply.Delay) {
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	ct := "text/event-stream"
	if status != http.StatusOK {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	body := reply.Body
	switch {
	case reply.Stall:
		body = body[:min(reply.StallAfter, len(body))]
	case reply.Cut:
		body = body[:min(reply.CutAfter, len(body))]
	default:
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	if reply.Pause > 0 && reply.PauseAfter < len(body) {
		writeFlush(w, body[:reply.PauseAfter])
		if !s.wait(r, reply.Pause) {
			return
		}
		body = body[reply.PauseAfter:]
	}
	writeFlush(w, body)
	switch {
	case reply.Stall:
		s.wait(r, time.Hour)
	case reply.Cut:
		// The response is chunked and unfinished: aborting the handler drops
		// the connection, and the client sees an unexpected EOF.
		panic(http.ErrAbortHandler)
	}
}

func writeFlush(w http.ResponseWriter, b []byte) {
	_, _ = io.Copy(w, bytes.NewReader(b))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// wait sleeps for d unless the client goes away or the server closes; it
// reports whether the full time passed.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}
