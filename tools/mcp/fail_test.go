package mcp

import (
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
)

func TestStartFailures(t *testing.T) {
	t.Parallel()
	hang, _ := stdioServer(t, "stuck", mcptest.ModeHangStart)
	hang.Timeout = 500 * time.Millisecond
	crash, _ := stdioServer(t, "broken", mcptest.ModeCrashStart)
	missing := Server{Name: "nosuch", Command: []string{"runner-test-no-such-program"}}
	refused := Server{Name: "down", URL: "http://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/mcp", Timeout: 2 * time.Second}
	tests := []struct {
		srv   Server
		class error
		want  []string
	}{
		{hang, ErrStart, []string{`stdio server "stuck" did not answer initialize within 500ms`, "hanging on purpose", "mcp.servers.stuck.timeout"}},
		{crash, ErrStart, []string{`stdio server "broken" exited during initialize (exit status 2)`, "cannot open the database (on purpose)"}},
		{missing, ErrConfig, []string{`server "nosuch"`, "runner-test-no-such-program", "not found"}},
		{refused, ErrStart, []string{`http server "down" initialize failed`}},
		{Server{Name: "both", Command: []string{"x"}, URL: "https://example.com/mcp"}, ErrConfig, []string{`server "both" has both command and url`}},
		{Server{Name: "plain", URL: "http://example.com/mcp"}, ErrConfig, []string{"use https"}},
	}
	for _, tt := range tests {
		t.Run(tt.srv.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, err := Start(t.Context(), Options{Servers: []Server{tt.srv}, Offer: offerAllBut(), StderrDir: dir}, "test")
			if !errors.Is(err, tt.class) {
				t.Fatalf("err = %v, want %v", err, tt.class)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// freePort is a loopback port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestSlowStartWithinTimeout(t *testing.T) {
	t.Parallel()
	srv, rec := stdioServer(t, "slow", mcptest.ModeSlowStart, "MCPTEST_DELAY=1500ms")
	srv.Timeout = 20 * time.Second
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
	if res := call(t, toolByName(t, set, ToolName("slow", "echo")), `{"text":"late"}`); res.Output != "echo: late" {
		t.Errorf("result = %+v", res)
	}
	if !rec.Has(t, "call echo late") {
		t.Errorf("server log: %v", rec.Log(t))
	}
}

func TestOneFailingServerStopsTheOthers(t *testing.T) {
	t.Parallel()
	good, rec := stdioServer(t, "good", mcptest.ModeServe)
	bad, _ := stdioServer(t, "bad", mcptest.ModeCrashStart)
	_, err := Start(t.Context(), Options{Servers: []Server{good, bad}, Offer: offerAllBut()}, "test")
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), `"bad"`) || strings.Contains(err.Error(), `"good"`) {
		t.Fatalf("err = %v", err)
	}
	waitFor(t, func() bool { return !processAlive(serverPid(t, rec)) }, "the good server to be stopped")
}

func TestCrashMidRunIsAToolError(t *testing.T) {
	t.Parallel()
	srv, rec := stdioServer(t, "fragile", mcptest.ModeServe)
	dir := t.TempDir()
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut(), StderrDir: dir})
	res := call(t, toolByName(t, set, ToolName("fragile", "crash")), `{}`)
	for _, w := range []string{`MCP server "fragile", tool "crash": the server exited (exit status 3) during the call`,
		"crashing on purpose", "cannot be used for the rest of the run", filepath.Join(dir, "fragile.stderr")} {
		if !res.IsError || !strings.Contains(res.Output, w) {
			t.Errorf("result lacks %q: %+v", w, res)
		}
	}
	res = call(t, toolByName(t, set, ToolName("fragile", "echo")), `{"text":"again"}`)
	if !res.IsError || !strings.Contains(res.Output, "the server is not running: it exited (exit status 3)") {
		t.Errorf("a call after the crash: %+v", res)
	}
	if rec.Has(t, "call echo again") {
		t.Error("a call reached a dead server")
	}
	data, err := os.ReadFile(filepath.Join(dir, "fragile.stderr"))
	if err != nil || !strings.Contains(string(data), "crashing on purpose") {
		t.Errorf("stderr file: %q, %v", data, err)
	}
}

func TestStdioEnvIsOnlyWhatIsGiven(t *testing.T) {
	t.Setenv("RUNNER_TEST_LEAK", "must-not-reach-the-server") // in this process only
	srv, _ := stdioServer(t, "envy", mcptest.ModeServe, "GIVEN=yes")
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
	res := call(t, toolByName(t, set, ToolName("envy", "env")), `{}`)
	got := strings.Split(res.Output, "\n")
	want := append([]string(nil), srv.Env...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("server env:\n got %q\nwant %q", got, want)
	}
}

func TestSecretsAreRedactedInStderrAndErrors(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value-0123456789"
	srv, _ := stdioServer(t, "leaky", mcptest.ModeServe, "MCPTEST_SECRET="+secret)
	dir := t.TempDir()
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut(), StderrDir: dir, Redact: redact})
	res := call(t, toolByName(t, set, ToolName("leaky", "crash")), `{}`)
	if strings.Contains(res.Output, secret) || !strings.Contains(res.Output, "secret in stderr: [REDACTED]") {
		t.Errorf("error result: %q", res.Output)
	}
	set.Close()
	data, err := os.ReadFile(filepath.Join(dir, "leaky.stderr"))
	if err != nil || strings.Contains(string(data), secret) || !strings.Contains(string(data), "[REDACTED]") {
		t.Errorf("stderr file: %q, %v", data, err)
	}
}

func TestCloseStopsStdioServers(t *testing.T) {
	t.Parallel()
	srv, rec := stdioServer(t, "stopme", mcptest.ModeServe)
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
	pid := serverPid(t, rec)
	if !processAlive(pid) {
		t.Fatalf("server %d is not running", pid)
	}
	set.Close()
	if processAlive(pid) {
		t.Errorf("server %d still runs after Close", pid)
	}
}

// serverPid is the pid a stdio server recorded when it started.
func serverPid(t *testing.T, rec *mcptest.Recorder) int {
	t.Helper()
	var pid int
	waitFor(t, func() bool {
		for _, l := range rec.Log(t) {
			if p, ok := strings.CutPrefix(l, "started pid="); ok {
				pid, _ = strconv.Atoi(p)
				return true
			}
		}
		return false
	}, "the server's pid")
	return pid
}

// processAlive reports whether pid runs (a zombie counts as gone).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	f := strings.Fields(string(data))
	return len(f) < 3 || f[2] != "Z"
}

// TestHTTPServerGoneMidRun: an HTTP server that goes away is a tool error
// naming the server; the call returns instead of hanging.
func TestHTTPServerGoneMidRun(t *testing.T) {
	t.Parallel()
	rec := &mcptest.Recorder{}
	ts := httptest.NewServer(mcptest.Handler(rec))
	srv := Server{Name: "remote", URL: ts.URL + "/mcp", Timeout: 5 * time.Second}
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut()})
	echo := toolByName(t, set, ToolName("remote", "echo"))
	if res := call(t, echo, `{"text":"before"}`); res.Output != "echo: before" {
		t.Fatalf("before: %+v", res)
	}
	ts.CloseClientConnections()
	ts.Close()
	res := call(t, echo, `{"text":"after"}`)
	if !res.IsError || !strings.Contains(res.Output, `MCP server "remote", tool "echo": `) {
		t.Errorf("after the server went away: %+v", res)
	}
}
