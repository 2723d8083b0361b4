package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
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
	modeServe      = "serve"       // serve on stdio
	modeSlowStart  = "slow-start"  // sleep MCPTEST_DELAY, then serve
	modeHangStart  = "hang-start"  // read stdin, never answer
	modeCrashStart = "crash-start" // write to stderr and exit 2 at once
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("MCPTEST_MODE"); mode != "" {
		os.Exit(serveMode(mode))
	}
	os.Exit(m.Run())
}

// serveMode runs this process as a stdio server and returns its exit code.
func serveMode(mode string) int {
	rec := &recorder{path: os.Getenv("MCPTEST_LOG")}
	rec.add("started pid=%d", os.Getpid())
	switch mode {
	case modeSlowStart:
		d, _ := time.ParseDuration(os.Getenv("MCPTEST_DELAY"))
		time.Sleep(d)
	case modeHangStart:
		fmt.Fprintln(os.Stderr, "hanging on purpose")
		select {}
	case modeCrashStart:
		fmt.Fprintln(os.Stderr, "fatal: cannot open the database (on purpose)")
		return 2
	}
	fmt.Fprintln(os.Stderr, "secret in stderr: "+os.Getenv("MCPTEST_SECRET"))
	if err := newTestServer(rec).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

// recorder is the server side's log of what it received: in memory, and
// appended to a file when path is set (stdio servers run in another
// process).
type recorder struct {
	mu    sync.Mutex
	path  string
	lines []string
}

func (r *recorder) add(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	if r.path != "" {
		f, err := os.OpenFile(r.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
}

// log returns the recorded lines (from the file when there is one).
func (r *recorder) log(t *testing.T) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.path == "" {
		return append([]string(nil), r.lines...)
	}
	data, err := os.ReadFile(r.path)
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

// has reports whether a recorded line starts with prefix.
func (r *recorder) has(t *testing.T, prefix string) bool {
	t.Helper()
	for _, l := range r.log(t) {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// testToolNames are the tools every test server lists, sorted.
func testToolNames() []string {
	names := []string{"crash", "denied", "echo", "env", "fail", "hang", "huge", "mixed",
		"ping", "progress", "structured", "weird.name/with spaces"}
	sort.Strings(names)
	return names
}

// newTestServer lists testToolNames in pages of three (so tools/list takes
// several requests).
func newTestServer(rec *recorder) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "v1"}, &sdk.ServerOptions{PageSize: 3})
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "bytes": map[string]any{"type": "integer"}}}
	for _, name := range testToolNames() {
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
func handle(ctx context.Context, rec *recorder, req *sdk.CallToolRequest, name, arg string, n int) (*sdk.CallToolResult, error) {
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
	case "crash":
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		os.Exit(3)
	}
	return nil, fmt.Errorf("no such tool %q", name)
}
