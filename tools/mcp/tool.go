package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// Permission is the permission an MCP tool call needs; its pattern is
// "SERVER/TOOL" with the tool's name as the server lists it.
const Permission = permission.MCP

// maxDescription bounds a tool's description in the prompt (some servers
// ship pages of text per tool).
const maxDescription = 4096

// errCallTimeout is the cancel cause when a call outlives the server's
// timeout.
var errCallTimeout = errors.New("mcp call timed out")

// tool is one server tool offered to the model.
type tool struct {
	c      *conn
	remote string // the tool's name on the server
	info   tools.Info
	opts   *Options
}

func newTool(c *conn, t *sdk.Tool, name string, opts *Options) *tool {
	desc := strings.TrimSpace(t.Description)
	if len(desc) > maxDescription {
		desc = strings.ToValidUTF8(desc[:maxDescription], "") + "…"
	}
	desc = fmt.Sprintf("%s\n\n(Tool %q of the MCP server %q.)", desc, t.Name, c.srv.Name)
	return &tool{c: c, remote: t.Name, opts: opts, info: tools.Info{
		Name: name, Description: strings.TrimSpace(desc), Parameters: inputSchema(t),
	}}
}

func (t *tool) Info() tools.Info { return t.info }

// Origin names the server and the tool as the server lists it (the runner
// puts them in the call's events).
func (t *tool) Origin() (server, tool string) { return t.c.srv.Name, t.remote }

// Permissions: one request, mcp "SERVER/TOOL", whatever the arguments.
func (t *tool) Permissions(json.RawMessage) ([]tools.Request, error) {
	return []tools.Request{{Permission: Permission, Target: t.c.srv.Name + "/" + t.remote}}, nil
}

// Run calls the tool on its server within the server's timeout. The
// server's failures (it is gone, it timed out, it answered with a protocol
// error, isError) are error Results the model reads; a Go error is returned
// only when ctx ended (the run was cancelled or the runner's tool timeout
// fired), and the server is told the call was cancelled.
func (t *tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var args map[string]any
	if err := json.Unmarshal(orEmpty(call.Input), &args); err != nil {
		return t.fail("the arguments are not a JSON object (%v); call it again with a valid JSON object", err), nil
	}
	if dead := t.c.gone(0); dead != nil {
		return t.fail("the server is not running: it %v. Its tools cannot be used for the rest of the run; do without them", dead), nil
	}
	pc := &progressCount{}
	token := fmt.Sprintf("%s-%d", t.c.srv.Name, t.c.tokens.Add(1))
	t.c.progress.Store(token, pc)
	defer t.c.progress.Delete(token)

	cctx, cancel := context.WithTimeoutCause(ctx, t.c.srv.timeout(), errCallTimeout)
	defer cancel()
	params := &sdk.CallToolParams{Name: t.remote, Arguments: args}
	params.SetProgressToken(token)
	start := time.Now()
	res, err := t.c.cs.CallTool(cctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, fmt.Errorf("mcp server %q: tools/call %s: %w", t.c.srv.Name, t.remote, context.Cause(ctx))
		}
		return t.callError(cctx, err, time.Since(start)), nil
	}
	return t.result(res, call.ID, pc), nil
}

// callError explains a call that failed without a result.
func (t *tool) callError(cctx context.Context, err error, took time.Duration) tools.Result {
	if errors.Is(context.Cause(cctx), errCallTimeout) {
		return t.fail("the server did not answer within %s (its timeout, mcp.servers.%s.timeout); the call was cancelled. "+
			"Try again with a smaller request, or do without it", t.c.srv.timeout(), t.c.srv.Name)
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return t.fail("the server answered with an error: %s", rpcErr.Message)
	}
	if errors.Is(err, sdk.ErrConnectionClosed) || t.c.proc != nil {
		dead := t.c.gone(2 * terminateGrace)
		if dead == nil && errors.Is(err, sdk.ErrConnectionClosed) {
			dead = errors.New("closed the connection")
		}
		if dead != nil {
			return t.fail("the server %v during the call (after %s)%s. Its tools cannot be used for the rest of the run; do without them",
				dead, took.Round(time.Millisecond), t.c.stderrNote())
		}
	}
	return t.fail("the call failed: %v", err)
}

// fail is an error Result naming the server and the tool.
func (t *tool) fail(format string, args ...any) tools.Result {
	msg := fmt.Sprintf("MCP server %q, tool %q: ", t.c.srv.Name, t.remote) + fmt.Sprintf(format, args...) + "."
	return tools.Result{Output: t.opts.redact(msg), IsError: true, Metadata: t.metadata(nil)}
}

// result turns the server's answer into what the model reads, bounded.
func (t *tool) result(res *sdk.CallToolResult, callID string, pc *progressCount) tools.Result {
	text := ResultText(res)
	out, cut, err := tools.BoundText(text, t.opts.MaxOutputBytes, t.opts.OutputDir, "mcp-"+t.c.srv.Name+"-"+callID, t.opts.Files)
	if err != nil {
		t.opts.logger().Warn("mcp: full result not saved", "server", t.c.srv.Name, "error", err)
	}
	r := tools.Result{Output: out, IsError: res.IsError, Truncated: cut, Metadata: t.metadata(pc)}
	// A stdio server runs in the work tree and may have written to it.
	r.TouchedUnknown = t.c.proc != nil
	return r
}

// metadata is the event-log detail of a call (the server and the tool are
// in the events' mcp field): when the server sent progress notifications,
// how many had been handled when the result came and the last message (a
// notification can be handled just after the result it precedes). Nil
// when there is nothing to say.
func (t *tool) metadata(pc *progressCount) map[string]any {
	if pc == nil || pc.n.Load() == 0 {
		return nil
	}
	m := map[string]any{"progress_notifications": pc.n.Load()}
	if s, _ := pc.last.Load().(string); s != "" {
		m["progress_message"] = s
	}
	return m
}

func orEmpty(b json.RawMessage) []byte {
	if len(strings.TrimSpace(string(b))) == 0 || string(b) == "null" {
		return []byte("{}")
	}
	return b
}
