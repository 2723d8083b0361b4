package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"time"

	"github.com/seed43ef5acb/runner/tools"
)

// DefaultTimeout bounds a server's start-up and each of its calls when the
// spec gives no timeout.
const DefaultTimeout = 30 * time.Second

// Server is one entry of the spec's mcp.servers, with the ${NAME}
// references of its headers and env already resolved. Exactly one of
// Command and URL is set.
type Server struct {
	// Name is the spec's key: letters, digits, '-' and '_' (ValidServerName).
	Name string
	// Command is a stdio server's program and arguments.
	Command []string
	// URL is a streamable HTTP endpoint: https://, or http:// to a
	// loopback address only.
	URL string
	// Headers are sent with every HTTP request (HTTP only).
	Headers map[string]string
	// Env is a stdio server's environment ("KEY=value"), on top of the
	// few variables the CommandFunc sets (see DirectCommand). Nothing else
	// of the runner's environment reaches the server.
	Env []string
	// Timeout bounds start-up (initialize and tools/list together) and
	// each call (0: DefaultTimeout).
	Timeout time.Duration
}

// timeout is s.Timeout or the default.
func (s Server) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// transport names the server's transport for messages.
func (s Server) transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// Check reports what is wrong with s as a spec entry; errors wrap
// ErrConfig. It does not touch the network or the file system.
func (s Server) Check() error {
	switch {
	case !ValidServerName(s.Name):
		return fmt.Errorf("%w: server name %q: use 1 to %d letters, digits, '-' or '_'", ErrConfig, s.Name, MaxServerName)
	case len(s.Command) > 0 && s.URL != "":
		return fmt.Errorf("%w: server %q has both command and url: give one (command for stdio, url for HTTP)", ErrConfig, s.Name)
	case len(s.Command) == 0 && s.URL == "":
		return fmt.Errorf("%w: server %q has neither command nor url: give one (command for stdio, url for HTTP)", ErrConfig, s.Name)
	case len(s.Command) > 0 && s.Command[0] == "":
		return fmt.Errorf("%w: server %q: the command's program is empty", ErrConfig, s.Name)
	case len(s.Command) > 0 && len(s.Headers) > 0:
		return fmt.Errorf("%w: server %q: headers are for HTTP servers (url); a stdio server takes env", ErrConfig, s.Name)
	case s.URL != "" && len(s.Env) > 0:
		return fmt.Errorf("%w: server %q: env is for stdio servers (command); an HTTP server takes headers", ErrConfig, s.Name)
	}
	if s.URL != "" {
		if err := CheckURL(s.URL); err != nil {
			return fmt.Errorf("%w: server %q: %w", ErrConfig, s.Name, err)
		}
	}
	return nil
}

// CheckURL accepts https:// URLs with a host, and http:// ones whose host
// is a loopback address or localhost (a local test server): headers carry
// tokens, which must not cross a network in clear text.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("url %q: %w", raw, err)
	}
	switch {
	case u.Host == "":
		return fmt.Errorf("url %q has no host: write https://HOST/PATH", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("url %q: use https (http:// only to localhost or a loopback address)", raw)
	}
	return fmt.Errorf("url %q: the scheme must be https", raw)
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// CommandFunc makes the process of a stdio server, unstarted, with Stdin,
// Stdout and Stderr unset (the transport sets them). env is the server's
// whole environment and dir its working directory. Start calls it once per
// stdio server, from its own goroutine; an error wrapping ErrConfig means
// the task is at fault (the program does not exist), any other error is an
// infrastructure failure (no sandbox could be set up). The pipeline's
// CommandFunc puts the process in the sandbox.
type CommandFunc func(ctx context.Context, server string, argv, env []string, dir string) (*exec.Cmd, error)

// Options are what Start needs besides the servers.
type Options struct {
	// Servers to start, in any order.
	Servers []Server
	// Offer reports whether a tool may be offered at all: whether an
	// allow rule of the mcp permission could ever match "SERVER/TOOL".
	// Nil offers nothing.
	Offer func(server, tool string) bool
	// Command makes stdio servers' processes (nil: DirectCommand).
	Command CommandFunc
	// WorkDir is stdio servers' working directory (the work tree).
	WorkDir string
	// StderrDir receives each stdio server's stderr as SERVER.stderr
	// ("": kept in memory only, for error messages).
	StderrDir string
	// OutputDir receives the full text of results that were cut for the
	// model ("": not kept).
	OutputDir string
	// Files makes the files of StderrDir and OutputDir (nil: plain files).
	Files tools.OutputFiles
	// MaxOutputBytes bounds a result's text for the model, head and tail
	// together (0: tools.DefaultMaxOutputBytes).
	MaxOutputBytes int
	// Redact hides secrets in what is written to StderrDir and in error
	// messages; nil hides nothing.
	Redact func(string) string
	// HTTPTransport is the base transport of HTTP servers (nil:
	// http.DefaultTransport).
	HTTPTransport http.RoundTripper
	// Logger receives diagnostics (nil: discarded).
	Logger *slog.Logger
}

func (o *Options) redact(s string) string {
	if o.Redact == nil {
		return s
	}
	return o.Redact(s)
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}
