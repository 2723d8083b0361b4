package mcp

import "errors"

// Sentinel errors, checked with errors.Is. Every error Start returns wraps
// one of them and names the server.
var (
	// ErrConfig: the task's server entry cannot work as written (no
	// command or url, both, a program that does not exist or cannot be
	// run, an http:// url to a host other than loopback). The task is
	// invalid (exit 2).
	ErrConfig = errors.New("invalid MCP server configuration")
	// ErrStart: the server was started but did not come up: it exited,
	// did not answer initialize or tools/list within its timeout, refused
	// the connection or broke the protocol. An infrastructure error
	// (exit 3).
	ErrStart = errors.New("MCP server did not start")
	// ErrNameClash: two tools got the same model-facing name (see
	// ToolName); an invalid task (exit 2).
	ErrNameClash = errors.New("two MCP tools have the same name")
)
