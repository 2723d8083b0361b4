package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed43ef5acb/runner/tools"
)

// ServerInfo describes a started server, for run.started and logs.
type ServerInfo struct {
	Name          string `json:"name"`
	Transport     string `json:"transport"` // "stdio" or "http"
	ServerName    string `json:"server_name,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
	Listed        int    `json:"tools_listed"`
	Offered       int    `json:"tools_offered"`
	StderrPath    string `json:"stderr_path,omitempty"`
}

// Set is the running servers of a run and the tools they offer. Close it
// when the run ends.
type Set struct {
	conns []*conn
	tools []tools.Tool
}

// Start starts every server (concurrently), runs initialize and lists its
// tools (every page), each server within its timeout, and keeps the tools
// opts.Offer allows. A server that fails stops everything: the others are
// closed and the error (wrapping ErrConfig, ErrStart or ErrNameClash, naming
// the server) is returned. ctx bounds start-up only; the servers live until
// Close. version is the runner's, sent as the client's.
func Start(ctx context.Context, opts Options, version string) (*Set, error) {
	conns := make([]*conn, len(opts.Servers))
	listed := make([][]*sdk.Tool, len(opts.Servers))
	errs := make([]error, len(opts.Servers))
	var wg sync.WaitGroup
	for i, srv := range opts.Servers {
		conns[i] = newConn(ctx, srv, &opts)
		wg.Go(func() { listed[i], errs[i] = conns[i].start(ctx, version) })
	}
	wg.Wait()
	s := &Set{conns: conns}
	if err := errors.Join(errs...); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.offer(listed, &opts); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// MaxListedTools bounds the tools one server may list: a server whose
// tools/list pages never end would have the runner hold every page until
// the start-up timeout (about 1 GB in 20 s from one server).
const MaxListedTools = 10_000

// start connects and lists the tools, within the server's timeout.
func (c *conn) start(ctx context.Context, version string) ([]*sdk.Tool, error) {
	if err := c.srv.Check(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.srv.timeout())
	defer cancel()
	if err := c.connect(ctx, version); err != nil {
		return nil, err
	}
	var out []*sdk.Tool
	for t, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, c.startFailure(ctx, "tools/list", err)
		}
		if len(out) == MaxListedTools {
			return nil, c.startFailure(ctx, "tools/list", fmt.Errorf("it lists more than %d tools (its pages never end?); "+
				"no model takes that many: serve fewer", MaxListedTools))
		}
		out = append(out, t)
	}
	c.info.Listed = len(out)
	return out, nil
}

// offer makes the tools that opts.Offer allows, sorted by name.
func (s *Set) offer(listed [][]*sdk.Tool, opts *Options) error {
	owner := map[string]string{} // model-facing name → "server/tool"
	for i, c := range s.conns {
		seen := map[string]bool{}
		for _, t := range listed[i] {
			if seen[t.Name] || opts.Offer == nil || !opts.Offer(c.srv.Name, t.Name) {
				continue
			}
			seen[t.Name] = true
			name := ToolName(c.srv.Name, t.Name)
			if prev, ok := owner[name]; ok {
				return fmt.Errorf("%w: %s and %s/%s are both %q; rename a server", ErrNameClash, prev, c.srv.Name, t.Name, name)
			}
			owner[name] = c.srv.Name + "/" + t.Name
			s.tools = append(s.tools, newTool(c, t, name, opts))
			c.info.Offered++
		}
	}
	sort.Slice(s.tools, func(i, j int) bool { return s.tools[i].Info().Name < s.tools[j].Info().Name })
	return nil
}

// Tools are the offered tools, sorted by name. Wrap them with tools.Guard
// like the built-in ones.
func (s *Set) Tools() []tools.Tool { return append([]tools.Tool(nil), s.tools...) }

// Servers describes the servers, in the order they were given.
func (s *Set) Servers() []ServerInfo {
	out := make([]ServerInfo, len(s.conns))
	for i, c := range s.conns {
		out[i] = c.info
	}
	return out
}

// Close ends every server: a stdio server's stdin is closed, then it gets
// SIGTERM and SIGKILL (its whole process group), each after a short grace;
// an HTTP session is deleted. Safe to call more than once and on nil.
func (s *Set) Close() {
	if s == nil {
		return
	}
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Go(c.close)
	}
	wg.Wait()
}

// inputSchema is the JSON Schema the model sees for t: the server's, or an
// empty object schema when it sent none or not an object. It is re-encoded
// with sorted keys (byte-stable); the provider's dialect is applied per
// request by llm (SanitizeSchema), as for the built-in tools.
func inputSchema(t *sdk.Tool) json.RawMessage {
	raw, err := json.Marshal(t.InputSchema)
	var obj map[string]any
	if err != nil || json.Unmarshal(raw, &obj) != nil || obj == nil {
		raw = json.RawMessage(`{"type":"object","properties":{}}`)
	} else if raw, err = json.Marshal(obj); err != nil { // map keys sorted: byte-stable
		raw = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return raw
}
