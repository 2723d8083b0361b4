package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed43ef5acb/runner/internal/httpguard"
	"github.com/seed43ef5acb/runner/tools"
)

// ProtocolVersion is the MCP revision the client asks for. Pinned to the
// last one with the initialize handshake and server-initiated requests
// (ping), which every deployed server speaks; a server that knows only an
// older one negotiates down.
const ProtocolVersion = "2025-11-25"

// terminateGrace is how long Close waits for a stdio server to exit after
// its stdin closed, and again after SIGTERM, before it kills the group.
const terminateGrace = time.Second

// conn is one running server: its session and, for stdio, its process.
type conn struct {
	srv    Server
	opts   *Options
	cs     *sdk.ClientSession
	proc   *process   // stdio only
	stderr *stderrLog // stdio only
	info   ServerInfo

	closing  atomic.Bool
	deadOnce sync.Once
	deadCh   chan struct{} // closed once dead is set
	dead     error         // why the server is gone (set before deadCh closes)
	reapOnce sync.Once

	// life bounds a stdio server's process: cancelled when the server is
	// stopped (a CommandFunc may tie the process to it, as
	// exec.CommandContext does).
	life     context.Context
	stopLife context.CancelFunc

	tokens   atomic.Int64
	progress sync.Map     // progress token → *progressCount
	notified atomic.Int64 // progress notifications received, all calls
}

// progressCount counts a call's progress notifications.
type progressCount struct {
	n    atomic.Int64
	last atomic.Value // string: the last message
}

// newConn prepares a conn; connect starts it.
func newConn(ctx context.Context, srv Server, opts *Options) *conn {
	life, stop := context.WithCancel(context.WithoutCancel(ctx))
	return &conn{srv: srv, opts: opts, deadCh: make(chan struct{}), life: life, stopLife: stop,
		info: ServerInfo{Name: srv.Name, Transport: srv.transport()}}
}

// connect starts the server and runs initialize; ctx bounds both.
func (c *conn) connect(ctx context.Context, version string) error {
	t, err := c.transport(ctx)
	if err != nil {
		return err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "runner", Version: version}, &sdk.ClientOptions{
		Logger:                      c.opts.logger(),
		Capabilities:                &sdk.ClientCapabilities{}, // no roots, sampling or elicitation: nobody is there
		ProgressNotificationHandler: c.onProgress,
	})
	cs, err := client.Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		c.reap()
		return c.startFailure(ctx, "initialize", err)
	}
	c.cs = cs
	if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil {
		c.info.ServerName, c.info.ServerVersion = r.ServerInfo.Name, r.ServerInfo.Version
	}
	go c.watch()
	return nil
}

// transport builds the SDK transport: a process for stdio, an HTTP client
// that adds the headers for HTTP.
func (c *conn) transport(ctx context.Context) (sdk.Transport, error) {
	if c.srv.URL != "" {
		base := c.opts.HTTPTransport
		if base == nil {
			base = http.DefaultTransport
		}
		// The headers go to the server's origin only, never after a
		// redirect to another one.
		hdr := http.Header{}
		for k, v := range c.srv.Headers {
			hdr.Set(k, v)
		}
		hc := &http.Client{Transport: &httpguard.HeaderTransport{Base: base, Origins: []string{httpguard.OriginOf(c.srv.URL)},
			Headers: hdr}, CheckRedirect: httpguard.CheckRedirect}
		return &sdk.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: hc, MaxRetries: -1}, nil
	}
	mk := c.opts.Command
	if mk == nil {
		mk = DirectCommand
	}
	cmd, err := mk(c.life, c.srv.Name, c.srv.Command, c.srv.Env, c.opts.WorkDir)
	if err != nil {
		if errors.Is(err, ErrConfig) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: server %q: %w", ErrStart, c.srv.Name, err)
	}
	if err := c.openStderr(); err != nil {
		return nil, err
	}
	cmd.Stderr = c.stderr
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = terminateGrace // a grandchild holding stderr open must not block the reaping
	}
	p, err := startProcess(cmd)
	if err != nil {
		_ = c.stderr.Close()
		return nil, fmt.Errorf("%w: stdio server %q could not be started: %w", startError(err), c.srv.Name, err)
	}
	c.proc = p
	go c.watchProcess()
	return &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil
}

// openStderr creates the stderr log, with its file in StderrDir.
func (c *conn) openStderr() error {
	c.stderr = &stderrLog{redact: c.opts.redact}
	if c.opts.StderrDir == "" {
		return nil
	}
	files := tools.OrPlain(c.opts.Files)
	if err := files.MkdirAll(c.opts.StderrDir); err != nil {
		return fmt.Errorf("%w: server %q: stderr log: %w", ErrStart, c.srv.Name, err)
	}
	path := filepath.Join(c.opts.StderrDir, c.srv.Name+".stderr")
	f, err := files.Create(path)
	if err != nil {
		return fmt.Errorf("%w: server %q: stderr log: %w", ErrStart, c.srv.Name, err)
	}
	c.stderr.file, c.info.StderrPath = f, path
	return nil
}

// startFailure explains a failed start-up step (initialize, tools/list):
// a program that could not be run is the task's fault, anything else
// (exit, hang, refusal) an infrastructure error. It names the server and
// quotes the end of its stderr.
func (c *conn) startFailure(ctx context.Context, step string, err error) error {
	class := ErrStart
	var what string
	switch {
	case ctx.Err() != nil:
		what = fmt.Sprintf("did not answer %s within %s (timeout; raise mcp.servers.%s.timeout if it is slow to start)", step, c.srv.timeout(), c.srv.Name)
	case c.proc != nil && c.proc.exited():
		what = fmt.Sprintf("exited during %s (%s)", step, c.proc.status(0))
	default:
		what = fmt.Sprintf("%s failed: %v", step, err)
	}
	return fmt.Errorf("%w: %s server %q %s%s", class, c.srv.transport(), c.srv.Name, c.opts.redact(what), c.stderrNote())
}

// stderrNote quotes the end of a stdio server's stderr, or "".
func (c *conn) stderrNote() string {
	if c.stderr == nil {
		return ""
	}
	note := ""
	if t := c.stderr.Tail(); t != "" {
		note = "; its stderr ends with:\n" + t
	}
	if c.info.StderrPath != "" {
		note += "\n(full stderr: " + c.info.StderrPath + ")"
	}
	return note
}

// watch waits for the session to end; an end that Close did not ask for
// means the server went away.
func (c *conn) watch() {
	err := c.cs.Wait()
	if c.closing.Load() {
		return
	}
	if c.proc != nil {
		c.markDead(fmt.Errorf("exited (%s)", c.proc.status(2*terminateGrace)))
		return
	}
	reason := "closed the connection"
	if err != nil {
		reason += ": " + err.Error()
	}
	c.markDead(errors.New(reason))
}

// watchProcess marks a stdio server dead as soon as its process exits.
func (c *conn) watchProcess() {
	<-c.proc.done
	if !c.closing.Load() {
		c.markDead(fmt.Errorf("exited (%s)", c.proc.status(0)))
	}
}

// markDead records why the server is gone, once.
func (c *conn) markDead(err error) {
	c.deadOnce.Do(func() {
		c.dead = err
		close(c.deadCh)
		c.opts.logger().Warn("mcp server gone", "server", c.srv.Name, "reason", err)
	})
}

// gone returns why the server is gone, waiting up to wait for the watcher
// to find out (a call can see the broken pipe before the watcher does).
func (c *conn) gone(wait time.Duration) error {
	select {
	case <-c.deadCh:
		return c.dead
	default:
	}
	if wait <= 0 {
		return nil
	}
	select {
	case <-c.deadCh:
		return c.dead
	case <-time.After(wait):
		return nil
	}
}

// reap closes the session and stops a stdio server's process, then
// closes the stderr log. Idempotent.
func (c *conn) reap() { c.reapOnce.Do(c.doReap) }

func (c *conn) doReap() {
	if c.cs != nil {
		_ = c.cs.Close()
	}
	if c.proc != nil {
		c.proc.stop(c.stopLife)
	}
	c.stopLife()
	if c.stderr != nil {
		_ = c.stderr.Close()
	}
}

// close ends the server at the end of the run.
func (c *conn) close() {
	c.closing.Store(true)
	c.reap()
}

// onProgress counts a call's progress notifications.
func (c *conn) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	c.notified.Add(1)
	if v, ok := c.progress.Load(p.ProgressToken); ok {
		pc := v.(*progressCount)
		pc.n.Add(1)
		pc.last.Store(p.Message)
	}
	c.opts.logger().Debug("mcp progress", "server", c.srv.Name, "token", p.ProgressToken,
		"progress", p.Progress, "total", p.Total, "message", p.Message)
}
