// Package mcptest is an MCP server written with the go-sdk for tests: a
// fixed set of tools (echo, fail, hang, crash, huge, progress, ping, env,
// read, write, dial, …), served over stdio by a test binary that re-executes itself
// (MaybeServe in TestMain) or over streamable HTTP (Handler). What it
// receives is recorded, so tests can assert on the server side that a
// denied call never arrived.
//
// Imports: the MCP go-sdk and the standard library.
package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test servers are written with the go-sdk. Stdio servers are this
// test binary run again with MCPTEST_MODE set (see TestMain); what they
// receive is appended to the file MCPTEST_LOG, so tests can assert on the
// server side.

// Server modes (MCPTEST_MODE).
const (
	ModeServe      = "serve"       // serve on stdio
	ModeSlowStart  = "slow-start"  // sleep MCPTEST_DELAY, then serve
	ModeHangStart  = "hang-start"  // read stdin, never answer
	ModeCrashStart = "crash-start" // write to stderr and exit 2 at once
	ModeStubborn   = "stubborn"    // serve, and keep running after stdin closes
	ModeEndless    = "endless"     // tools/list pages that never end (a hostile server)
)

// MaybeServe runs this process as a stdio test server when MCPTEST_MODE
// is set (and exits); call it first in TestMain. The server's log goes to
// the file MCPTEST_LOG, MCPTEST_DELAY delays a slow start, MCPTEST_SECRET
// is echoed to stderr (for redaction tests).
func MaybeServe() {
	if mode := os.Getenv("MCPTEST_MODE"); mode != "" {
		os.Exit(serveMode(mode))
	}
}

// Env is the environment that makes this binary a stdio test server in
// mode, logging to logPath.
func Env(mode, logPath string) []string {
	return []string{"MCPTEST_MODE=" + mode, "MCPTEST_LOG=" + logPath}
}

// serveMode runs this process as a stdio server and returns its exit code.
func serveMode(mode string) int {
	rec := &Recorder{Path: os.Getenv("MCPTEST_LOG")}
	rec.add("started pid=%d", os.Getpid())
	switch mode {
	case ModeSlowStart:
		d, _ := time.ParseDuration(os.Getenv("MCPTEST_DELAY"))
		time.Sleep(d)
	case ModeHangStart:
		fmt.Fprintln(os.Stderr, "hanging on purpose")
		select {}
	case ModeCrashStart:
		fmt.Fprintln(os.Stderr, "fatal: cannot open the database (on purpose)")
		return 2
	case ModeEndless:
		return serveEndless(rec)
	}
	fmt.Fprintln(os.Stderr, "secret in stderr: "+os.Getenv("MCPTEST_SECRET"))
	err := NewServer(rec).Run(context.Background(), &sdk.StdioTransport{})
	if mode == ModeStubborn {
		signal.Ignore(syscall.SIGTERM)
		rec.add("stdin closed, staying")
		select {}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

// Recorder is the server side's log of what it received ("call TOOL
// ARG", "cancelled hang", "started pid=N"): in memory, and appended to the
// file Path when it is set (a stdio server runs in another process).
type Recorder struct {
	mu    sync.Mutex
	Path  string
	lines []string
}

func (r *Recorder) add(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	if r.Path != "" {
		f, err := os.OpenFile(r.Path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
}

// Log returns the recorded lines (from the file when there is one).
func (r *Recorder) Log(t testing.TB) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Path == "" {
		return append([]string(nil), r.lines...)
	}
	data, err := os.ReadFile(r.Path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Has reports whether a recorded line starts with prefix.
func (r *Recorder) Has(t testing.TB, prefix string) bool {
	t.Helper()
	for _, l := range r.Log(t) {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// ToolNames are the tools the server lists, sorted.
func ToolNames() []string {
	names := []string{"crash", "denied", "echo", "env", "fail", "hang", "huge", "mixed",
		"ping", "progress", "structured", "weird.name/with spaces", "write", "dial", "read"}
	sort.Strings(names)
	return names
}

// NewServer lists ToolNames in pages of three (so tools/list takes
// several requests) and records what it receives in rec.
func NewServer(rec *Recorder) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "v1"}, &sdk.ServerOptions{PageSize: 3})
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "bytes": map[string]any{"type": "integer"}}}
	for _, name := range ToolNames() {
		s.AddTool(&sdk.Tool{Name: name, Description: "test tool " + name, InputSchema: schema},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var args struct {
					Text  string `json:"text"`
					Bytes int    `json:"bytes"`
				}
				_ = json.Unmarshal(req.Params.Arguments, &args)
				rec.add("call %s %s", name, args.Text)
				return handle(ctx, rec, req, name, args.Text, args.Bytes)
			})
	}
	return s
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// handle is the behaviour of each test tool.
func handle(ctx context.Context, rec *Recorder, req *sdk.CallToolRequest, name, arg string, n int) (*sdk.CallToolResult, error) {
	switch name {
	case "echo", "denied", "weird.name/with spaces":
		return text("echo: " + arg), nil
	case "fail":
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke: " + arg}}}, nil
	case "structured":
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "two items"}},
			StructuredContent: map[string]any{"items": []any{"a", "b"}}}, nil
	case "mixed":
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{Data: make([]byte, 10), MIMEType: "image/png"},
			&sdk.ResourceLink{URI: "file:///doc.md", Name: "doc", MIMEType: "text/markdown"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "the note"}},
		}}, nil
	case "huge":
		return text("HEAD" + strings.Repeat("x", n) + "TAIL"), nil
	case "hang":
		<-ctx.Done()
		rec.add("cancelled hang")
		return nil, ctx.Err()
	case "progress":
		for i := 1; i <= 3; i++ {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
		}
		return text("done"), nil
	case "ping":
		if err := req.Session.Ping(ctx, nil); err != nil {
			return nil, fmt.Errorf("the client did not answer ping: %w", err)
		}
		return text("the client answered ping"), nil
	case "env":
		env := os.Environ()
		sort.Strings(env)
		return text(strings.Join(env, "\n")), nil
	case "write": // arg: a path; tries to create it
		if err := os.WriteFile(arg, []byte("written by the MCP server\n"), 0o644); err != nil {
			return text("write failed: " + err.Error()), nil
		}
		return text("wrote " + arg), nil
	case "read": // arg: a path; returns its content
		data, err := os.ReadFile(arg)
		if err != nil {
			return text("read failed: " + err.Error()), nil
		}
		return text("read: " + string(data)), nil
	case "dial": // arg: host:port; tries to connect
		c, err := (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", arg)
		if err != nil {
			return text("dial failed: " + err.Error()), nil
		}
		c.Close()
		return text("connected to " + arg), nil
	case "crash":
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		os.Exit(3)
	}
	return nil, fmt.Errorf("no such tool %q", name)
}

// Handler serves a new server over streamable HTTP, recording into rec.
func Handler(rec *Recorder) http.Handler {
	srv := NewServer(rec)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

// serveEndless answers JSON-RPC lines on stdin by hand: initialize, and
// tools/list with 100 tools and a next cursor on every page, forever.
func serveEndless(rec *Recorder) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	page := 0
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		var result any = map[string]any{}
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "endless", "version": "v1"}}
		case "tools/list":
			tools := make([]any, 100)
			for i := range tools {
				tools[i] = map[string]any{"name": fmt.Sprintf("t%d_%d", page, i), "inputSchema": map[string]any{"type": "object"}}
			}
			page++
			result = map[string]any{"tools": tools, "nextCursor": fmt.Sprint(page)}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		_, _ = out.Write(append(b, '\n'))
		_ = out.Flush()
	}
	rec.add("endless: %d pages", page)
	return 0
}
