// Package tools holds the agent's built-in tools (read, write, edit, glob,
// grep, list, bash; Builtins, NewBash) and the permission decorator that
// stands in front of every call (Guard). It knows nothing of the runner, the pipeline or
// GitHub.
//
// Imports: tools/sandbox, tools/permission, tools/permission/bashcheck,
// internal/gitignore, internal/treewalk and secret; never runner, pipeline or
// github.
package tools

import (
	"context"
	"encoding/json"
)

// Tool is one capability offered to the model.
//
// Run is called by the runner's processor from its own goroutine, once per
// tool call, after the permission check passed. An error the model should
// read and react to (file not found, bad arguments, a non-zero exit) is a
// Result with IsError set; a Go error means the machinery failed and ends
// the tool part with that error.
type Tool interface {
	Info() Info
	Run(ctx context.Context, call Call) (Result, error)
}

// Info describes a tool to the model. Names and parameter names are a public
// contract: recorded sessions and event logs depend on them.
type Info struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments object
}

// Call is one tool call to run.
type Call struct {
	ID    string
	Input json.RawMessage // a JSON object
}

// Result is what a tool call produced.
type Result struct {
	// Output is the text the model reads (bounded).
	Output string
	// IsError marks a result the model should treat as a failure.
	IsError bool
	// Truncated is true when Output was cut.
	Truncated bool
	// Metadata is machine-readable detail for the event log (e.g. exit_code).
	Metadata map[string]any
	// Touched lists work-tree-relative slash paths the tool wrote, so a
	// snapshot need not walk the tree. Nil with Unknown set means "anything
	// may have changed" (bash).
	Touched []string
	// TouchedUnknown says the tool may have changed any file (bash).
	TouchedUnknown bool
	// Denial is set when the permission check refused the call.
	Denial *Denial
}

// Denial explains a refused call: which permission, for what pattern, and the
// rule that decided (nil Rule: nothing allowed it; then Protection names the
// built-in protection that denied it, permission.Decision's, and "" is the
// default deny).
type Denial struct {
	Permission string  `json:"permission"`
	Pattern    string  `json:"pattern"`
	Rule       *string `json:"rule"`
	Protection string  `json:"protection,omitempty"`
	Reason     string  `json:"reason"`
}

// Originer is implemented by tools that come from an MCP server: Origin
// names the server and the tool as the server lists it. The runner puts
// both in the call's events.
type Originer interface {
	Origin() (server, tool string)
}

// OriginOf returns where t comes from, looking through Guard; ok is false
// for a built-in tool.
func OriginOf(t Tool) (server, tool string, ok bool) {
	for t != nil {
		if o, is := t.(Originer); is {
			server, tool = o.Origin()
			return server, tool, true
		}
		u, is := t.(interface{ Unwrap() Tool })
		if !is {
			break
		}
		t = u.Unwrap()
	}
	return "", "", false
}
