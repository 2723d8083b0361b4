package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// offerAllBut offers every tool except the named ones.
func offerAllBut(denied ...string) func(server, tool string) bool {
	return func(_, tool string) bool { return !slices.Contains(denied, tool) }
}

// stdioServer is a Server entry that runs this test binary in mode, with
// its log at rec's path and extra env.
func stdioServer(t *testing.T, name, mode string, extraEnv ...string) (Server, *mcptest.Recorder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rec := &mcptest.Recorder{Path: filepath.Join(t.TempDir(), "server.log")}
	env := append(mcptest.Env(mode, rec.Path), extraEnv...)
	return Server{Name: name, Command: []string{exe}, Env: env, Timeout: time.Minute}, rec
}

// httpServer serves the test server over streamable HTTP on loopback and
// records the Authorization header of every request.
func httpServer(t *testing.T, name string) (Server, *mcptest.Recorder, *headerLog) {
	t.Helper()
	rec := &mcptest.Recorder{}
	hl := &headerLog{}
	h := mcptest.Handler(rec)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hl.add(r.Header.Get("Authorization"))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return Server{Name: name, URL: ts.URL + "/mcp", Timeout: time.Minute}, rec, hl
}

type headerLog struct {
	mu   sync.Mutex
	auth []string
}

func (h *headerLog) add(v string) { h.mu.Lock(); h.auth = append(h.auth, v); h.mu.Unlock() }

// start starts a Set and closes it at the end of the test.
func start(t *testing.T, opts Options) *Set {
	t.Helper()
	set, err := Start(t.Context(), opts, "test")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(set.Close)
	return set
}

// toolByName finds an offered tool by its model-facing name.
func toolByName(t *testing.T, set *Set, name string) tools.Tool {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q among %v", name, names(set))
	return nil
}

func names(set *Set) []string {
	var out []string
	for _, tl := range set.Tools() {
		out = append(out, tl.Info().Name)
	}
	return out
}

func call(t *testing.T, tl tools.Tool, input string) tools.Result {
	t.Helper()
	res, err := tl.Run(t.Context(), tools.Call{ID: "call_1", Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("%s: %v", tl.Info().Name, err)
	}
	return res
}

// transports runs a test against a stdio and an HTTP server of the same
// tools (one conformance suite for both).
func transports(t *testing.T, test func(t *testing.T, srv Server, rec *mcptest.Recorder)) {
	t.Helper()
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		srv, rec := stdioServer(t, "tst", mcptest.ModeServe)
		test(t, srv, rec)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		srv, rec, _ := httpServer(t, "tst")
		test(t, srv, rec)
	})
}

func TestListingIsPaginatedSortedAndFiltered(t *testing.T) {
	transports(t, func(t *testing.T, srv Server, rec *mcptest.Recorder) {
		t.Helper()
		set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut("denied")})
		var want []string
		for _, n := range mcptest.ToolNames() {
			if n != "denied" {
				want = append(want, ToolName("tst", n))
			}
		}
		slices.Sort(want)
		if got := names(set); !slices.Equal(got, want) {
			t.Errorf("offered tools:\n got %v\nwant %v", got, want)
		}
		info := set.Servers()[0]
		if info.Listed != len(mcptest.ToolNames()) || info.Offered != len(want) || info.ServerName != "testserver" {
			t.Errorf("server info = %+v", info)
		}
		// The names and schemas are byte-stable: a second start offers the same.
		again := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut("denied")})
		a, _ := json.Marshal(infos(set))
		b, _ := json.Marshal(infos(again))
		if string(a) != string(b) {
			t.Errorf("tool infos differ between two starts:\n%s\n%s", a, b)
		}
	})
}

func infos(set *Set) []tools.Info {
	var out []tools.Info
	for _, tl := range set.Tools() {
		out = append(out, tl.Info())
	}
	return out
}

func TestCallsAndResults(t *testing.T) {
	transports(t, func(t *testing.T, srv Server, rec *mcptest.Recorder) {
		t.Helper()
		set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
		tests := []struct {
			tool, input string
			want        []string
			isError     bool
		}{
			{"echo", `{"text":"hello"}`, []string{"echo: hello"}, false},
			{"weird.name/with spaces", `{"text":"odd"}`, []string{"echo: odd"}, false},
			{"fail", `{"text":"why"}`, []string{"it broke: why"}, true},
			{"structured", `{}`, []string{"two items", `Structured content (JSON):` + "\n" + `{"items":["a","b"]}`}, false},
			{"mixed", `{}`, []string{"[image: image/png, 10 bytes, not shown]",
				"[resource link: file:///doc.md (doc), text/markdown]", "[resource: mem://note, text/plain]\nthe note"}, false},
			{"ping", `{}`, []string{"the client answered ping"}, false},
		}
		for _, tt := range tests {
			res := call(t, toolByName(t, set, ToolName("tst", tt.tool)), tt.input)
			for _, w := range tt.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("%s: output %q lacks %q", tt.tool, res.Output, w)
				}
			}
			if res.IsError != tt.isError {
				t.Errorf("%s: IsError = %v, want %v", tt.tool, res.IsError, tt.isError)
			}
			if s, tl, ok := tools.OriginOf(tools.Guard(toolByName(t, set, ToolName("tst", tt.tool)), nil, t.TempDir())); !ok || s != "tst" || tl != tt.tool {
				t.Errorf("%s: origin = %q, %q, %v", tt.tool, s, tl, ok)
			}
			if res.TouchedUnknown != (srv.URL == "") {
				t.Errorf("%s: TouchedUnknown = %v for a %s server", tt.tool, res.TouchedUnknown, srv.transport())
			}
		}
		if !rec.Has(t, "call echo hello") {
			t.Errorf("the server did not record the echo call: %v", rec.Log(t))
		}
	})
}

func TestProgressNotifications(t *testing.T) {
	transports(t, func(t *testing.T, srv Server, rec *mcptest.Recorder) {
		t.Helper()
		set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
		res := call(t, toolByName(t, set, ToolName("tst", "progress")), `{}`)
		if res.Output != "done" {
			t.Fatalf("output = %q", res.Output)
		}
		// Notifications and the response travel separately (over HTTP, on
		// different streams): all three were sent before the response, but
		// may be handled just after it.
		waitFor(t, func() bool { return set.conns[0].notified.Load() == 3 }, "three progress notifications")
		if n, _ := res.Metadata["progress_notifications"].(int64); n > 3 {
			t.Errorf("progress_notifications = %v, want at most 3", res.Metadata["progress_notifications"])
		}
	})
}

func TestHugeResultIsBoundedAndKept(t *testing.T) {
	transports(t, func(t *testing.T, srv Server, rec *mcptest.Recorder) {
		t.Helper()
		dir := t.TempDir()
		srv.Timeout = 2 * time.Minute // a megabyte through JSON-RPC is slow under -race on a loaded machine
		set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut(), OutputDir: dir, MaxOutputBytes: 4000})
		res := call(t, toolByName(t, set, ToolName("tst", "huge")), `{"bytes":1000000}`)
		if !res.Truncated || len(res.Output) > 5000 {
			t.Fatalf("Truncated = %v, %d bytes for the model: %.300q", res.Truncated, len(res.Output), res.Output)
		}
		if !strings.HasPrefix(res.Output, "HEAD") || !strings.HasSuffix(res.Output, "TAIL") {
			t.Errorf("head or tail lost: %q…%q", res.Output[:10], res.Output[len(res.Output)-10:])
		}
		m := regexp.MustCompile(`the full output is in (\S+) \(the run.s record`).FindStringSubmatch(res.Output)
		if m == nil {
			t.Fatalf("no full-output path in %q", res.Output[1990:2200])
		}
		full, err := os.ReadFile(m[1])
		if err != nil || len(full) != 1000008 {
			t.Errorf("full output: %d bytes, %v", len(full), err)
		}
	})
}

func TestDeniedToolIsNeverSent(t *testing.T) {
	transports(t, func(t *testing.T, srv Server, rec *mcptest.Recorder) {
		t.Helper()
		rules := permission.Ruleset{
			{Permission: Permission, Pattern: "tst/*", Action: permission.Allow},
			{Permission: Permission, Pattern: "tst/denied", Action: permission.Deny},
			{Permission: Permission, Pattern: "tst/fail", Action: permission.Deny},
		}
		offer := func(s, tl string) bool { return rules.Evaluate(Permission, s+"/"+tl).Allowed }
		set := start(t, Options{Servers: []Server{srv}, Offer: offer})
		for _, n := range names(set) {
			if n == ToolName("tst", "denied") || n == ToolName("tst", "fail") {
				t.Errorf("%s is offered although a deny rule matches it", n)
			}
		}
		// Even offered, a call goes through the guard: with rules that deny
		// echo, the call is refused before it reaches the server.
		echo := toolByName(t, set, ToolName("tst", "echo"))
		guarded := tools.Guard(echo, permission.Ruleset{{Permission: Permission, Pattern: "tst/echo", Action: permission.Deny}}, t.TempDir())
		res := call(t, guarded, `{"text":"must not arrive"}`)
		if res.Denial == nil || res.Denial.Permission != Permission || res.Denial.Pattern != "tst/echo" {
			t.Errorf("denial = %+v, output %q", res.Denial, res.Output)
		}
		allowed := call(t, tools.Guard(echo, rules, t.TempDir()), `{"text":"allowed"}`)
		if allowed.IsError {
			t.Errorf("allowed call failed: %s", allowed.Output)
		}
		for _, l := range rec.Log(t) {
			if strings.HasPrefix(l, "call denied") || strings.HasPrefix(l, "call fail") || strings.Contains(l, "must not arrive") {
				t.Errorf("the server received a denied call: %q", l)
			}
		}
		if !rec.Has(t, "call echo allowed") {
			t.Errorf("the allowed call did not arrive: %v", rec.Log(t))
		}
	})
}

func TestHangingCallTimesOutAndIsCancelled(t *testing.T) {
	transports(t, func(t *testing.T, srv Server, rec *mcptest.Recorder) {
		t.Helper()
		set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
		set.conns[0].srv.Timeout = 500 * time.Millisecond // calls only: start-up had its minute
		res := call(t, toolByName(t, set, ToolName("tst", "hang")), `{}`)
		if !res.IsError || !strings.Contains(res.Output, `MCP server "tst", tool "hang": the server did not answer within 500ms`) {
			t.Errorf("result = %+v", res)
		}
		waitFor(t, func() bool { return rec.Has(t, "cancelled hang") }, "the server to see the cancellation")
		// The server is still usable.
		if res := call(t, toolByName(t, set, ToolName("tst", "echo")), `{"text":"after"}`); res.Output != "echo: after" {
			t.Errorf("after a timeout: %+v", res)
		}
	})
}

func TestCancelledRunCancelsTheCall(t *testing.T) {
	transports(t, func(t *testing.T, srv Server, rec *mcptest.Recorder) {
		t.Helper()
		set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err := toolByName(t, set, ToolName("tst", "hang")).Run(ctx, tools.Call{ID: "c", Input: json.RawMessage(`{}`)})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `mcp server "tst"`) {
			t.Errorf("err = %v", err)
		}
		waitFor(t, func() bool { return rec.Has(t, "cancelled hang") }, "the server to see the cancellation")
	})
}

// waitFor polls cond for up to 60 s (an event in another process, which a
// loaded machine can delay; no timing is asserted).
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
