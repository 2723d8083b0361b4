// Package githubtest is a fake GitHub REST API for tests: an httptest server
// with a registry of stubs, in the style of cli/cli's httpmock. Each stub
// answers one request (or a set number) for a method and path; a request no
// stub matches fails the test, and so does a stub still unused when the test
// ends.
//
// Imports: go-github and the standard library; tests of any package above
// github use it.
package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	gh "github.com/google/go-github/v60/github"
)

// Responder writes the reply to a matched request.
type Responder func(w http.ResponseWriter, r *http.Request)

// Stub is one expected request.
type Stub struct {
	Method string
	Path   string     // API path without the prefix, e.g. "/repos/o/r/pulls/1"
	Query  url.Values // these query parameters must be present with these values
	prefix bool       // Path is a prefix (RegisterPrefix)
	times  int        // how many requests it answers
	min    int        // with AnyTimes: how many it must have answered
	used   int
	reply  Responder
	mu     *sync.Mutex // the registry's: a request may be served while the stub is set up
}

// AnyTimes lets the stub answer any number of requests, and requires at
// least min of them when the test ends.
func (s *Stub) AnyTimes(min int) *Stub {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.times, s.min = int(^uint(0)>>1), min
	return s
}

// Times lets the stub answer n requests (default 1).
func (s *Stub) Times(n int) *Stub {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.times = n
	return s
}

// WithQuery requires a query parameter.
func (s *Stub) WithQuery(key, value string) *Stub {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Query == nil {
		s.Query = url.Values{}
	}
	s.Query.Set(key, value)
	return s
}

func (s *Stub) matches(r *http.Request, path string) bool {
	if s.used >= s.times || r.Method != s.Method || (path != s.Path && !(s.prefix && strings.HasPrefix(path, s.Path))) {
		return false
	}
	q := r.URL.Query()
	for k := range s.Query {
		if q.Get(k) != s.Query.Get(k) {
			return false
		}
	}
	return true
}

// Registry is the fake server's list of stubs.
type Registry struct {
	t      testing.TB
	prefix string
	Server *httptest.Server

	mu     sync.Mutex
	stubs  []*Stub
	served []string
}

// New starts a fake API serving under prefix (such as "/api-v3" or the
// GHES "/api/v3"); requests outside it fail the test, which catches code
// that builds absolute URLs. The server stops and the stubs are verified
// when the test ends.
func New(t testing.TB, prefix string) *Registry {
	t.Helper()
	reg := &Registry{t: t, prefix: strings.TrimRight(prefix, "/")}
	reg.Server = httptest.NewServer(http.HandlerFunc(reg.serve))
	t.Cleanup(func() {
		reg.Server.Close()
		reg.Verify()
	})
	return reg
}

// BaseURL is the server URL with the prefix and a trailing slash.
func (reg *Registry) BaseURL() string { return reg.Server.URL + reg.prefix + "/" }

// Client returns a go-github client pointed at the fake server.
func (reg *Registry) Client() *gh.Client {
	c := gh.NewClient(reg.Server.Client())
	u, err := url.Parse(reg.BaseURL())
	if err != nil {
		reg.t.Fatalf("githubtest: %v", err)
	}
	c.BaseURL, c.UploadURL = u, u
	return c
}

// Register adds a stub answering method and path with reply.
func (reg *Registry) Register(method, path string, reply Responder) *Stub {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	s := &Stub{Method: method, Path: path, times: 1, reply: reply, mu: &reg.mu}
	reg.stubs = append(reg.stubs, s)
	return s
}

// RegisterPrefix adds a stub answering method on every path under prefix
// (a stateful fake that reads the path itself), any number of times.
func (reg *Registry) RegisterPrefix(method, prefix string, reply Responder) *Stub {
	s := reg.Register(method, prefix, reply).AnyTimes(0)
	reg.mu.Lock()
	s.prefix = true
	reg.mu.Unlock()
	return s
}

// Verify fails the test for every stub not used as often as expected.
func (reg *Registry) Verify() {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, s := range reg.stubs {
		if s.min > 0 && s.used < s.min || s.min == 0 && s.times != int(^uint(0)>>1) && s.used < s.times {
			reg.t.Errorf("githubtest: stub %s %s %v used %d of %d times", s.Method, s.Path, s.Query, s.used, s.times)
		}
	}
}

func (reg *Registry) serve(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, reg.prefix+"/")
	if !ok {
		reg.t.Errorf("githubtest: request outside the API prefix %q: %s %s", reg.prefix, r.Method, r.URL)
		http.Error(w, "outside the API prefix", http.StatusBadGateway)
		return
	}
	path = "/" + path
	reg.mu.Lock()
	reg.served = append(reg.served, r.Method+" "+path)
	var hit *Stub
	for _, s := range reg.stubs {
		if s.matches(r, path) {
			hit = s
			s.used++
			break
		}
	}
	reg.mu.Unlock()
	if hit == nil {
		reg.t.Errorf("githubtest: no stub for %s %s", r.Method, r.URL)
		http.Error(w, `{"message":"no stub"}`, http.StatusNotImplemented)
		return
	}
	hit.reply(w, r)
}

// Served lists the requests served so far, in order, as "METHOD /path"
// (the API path without the prefix or query), for tests that assert the
// order of calls.
func (reg *Registry) Served() []string {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return append([]string(nil), reg.served...)
}

// JSON replies with status and v encoded as JSON.
func JSON(status int, v any) Responder {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, status, v)
	}
}

// Page replies with one page of a list and a Link header naming the next
// and last pages (page numbers from 1; no next link on the last page).
func Page(v any, page, last int) Responder {
	return func(w http.ResponseWriter, r *http.Request) {
		link := func(n int, rel string) string {
			u := *r.URL
			u.Scheme, u.Host = "http", r.Host
			q := u.Query()
			q.Set("page", fmt.Sprint(n))
			u.RawQuery = q.Encode()
			return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
		}
		if page < last {
			w.Header().Set("Link", link(page+1, "next")+", "+link(last, "last"))
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// Capture decodes the request body into dst (a pointer) before replying
// with next.
func Capture(t testing.TB, dst any, next Responder) Responder {
	t.Helper()
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(data, dst)
		}
		if err != nil {
			t.Errorf("githubtest: request body of %s %s: %v", r.Method, r.URL.Path, err)
		}
		next(w, r)
	}
}

// Error replies with a GitHub-shaped error body.
func Error(status int, message string) Responder {
	return JSON(status, map[string]any{"message": message, "documentation_url": "https://docs.github.com/rest"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
