package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/mcp"
	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// startMCP starts the task's MCP servers and lists their tools. A server
// that fails to start ends the run as an infrastructure error (exit 3);
// its stderr is in the out dir's mcp/ directory.
func (r *execRun) startMCP(ctx context.Context) error {
	if len(r.mcpServers) == 0 {
		return skip("no mcp servers")
	}
	if err := r.waitBase(); err != nil { // what a server writes is the run's
		return err
	}
	rules, err := r.spec.Ruleset()
	if err != nil {
		return err
	}
	if err := r.mcpSandbox(); err != nil {
		return err
	}
	set, err := mcp.Start(ctx, mcp.Options{
		Servers:   r.mcpServers,
		Offer:     func(server, tool string) bool { return rules.Evaluate(permission.MCP, server+"/"+tool).Allowed },
		Command:   r.mcpCommand,
		WorkDir:   r.workTree,
		StderrDir: filepath.Join(r.outDir, outdir.MCPStderrDir),
		OutputDir: filepath.Join(r.outDir, outdir.ToolOutputDir),
		Files:     outputFiles{r.outFiles, r.modes},
		Redact:    r.redactor.Redact,
		Logger:    r.log,
	}, Version())
	switch {
	case err == nil:
		r.mcp = set
		r.log.Info("mcp servers started", "servers", r.mcpNote())
		return nil
	case ctx.Err() != nil:
		return errCancelled(ctx)
	case errors.Is(err, mcp.ErrStart):
		return fmt.Errorf("%w: %w", ErrInfra, err)
	}
	return fmt.Errorf("%w: %w", spec.ErrInvalidSpec, err)
}

// mcpSandbox builds each stdio server's sandbox: the task's (its mode,
// the work tree, what it hides) with the server's own holes instead of the
// task's. Without a layer (mode auto on a machine without one) stdio
// servers are refused like bash.
func (r *execRun) mcpSandbox() error {
	r.mcpSandboxes, r.mcpHoles = map[string]*sandbox.Sandbox{}, map[string]mcpHoles{}
	for _, srv := range r.mcpServers {
		if len(srv.Command) == 0 {
			continue
		}
		sec := r.spec.MCP.Servers[srv.Name].Sandbox
		pol := r.sandboxPolicy
		pol.WorkTree, pol.Writable, pol.Network = r.workTree, nil, sec.Network
		pol.Proxy, pol.NoProxy = "", nil // the allow list is the task's commands', not a server's
		for i, w := range sec.Writable {
			p, err := r.expandWritable(w)
			if errors.Is(err, spec.ErrUnset) {
				fmt.Fprintf(r.opts.Stderr, "runner: mcp.servers.%s: %v: that hole is not opened\n", srv.Name, err)
				continue
			}
			if err != nil {
				return fmt.Errorf("%w: mcp.servers.%s: %w", ErrUsage, srv.Name, err)
			}
			if err := r.broadWritable(sec, fmt.Sprintf("mcp.servers.%s.sandbox.writable[%d]", srv.Name, i), w, p); err != nil {
				return err
			}
			pol.Writable = append(pol.Writable, p)
		}
		r.mcpHoles[srv.Name] = mcpHoles{writable: pol.Writable, network: sec.Network}
		sb, err := sandbox.New(pol)
		if err == nil {
			err = sb.Err()
		}
		if err != nil {
			return fmt.Errorf("%w: MCP stdio server %q cannot run: %w", ErrUsage, srv.Name, err)
		}
		r.mcpSandboxes[srv.Name] = sb
	}
	return nil
}

// mcpTools are the offered MCP tools (none without servers).
func (r *execRun) mcpTools() []tools.Tool {
	if r.mcp == nil {
		return nil
	}
	return r.mcp.Tools()
}

// stopMCP ends the servers once the agent and the checks are done, before
// the final snapshot (a stdio server runs in the work tree).
func (r *execRun) stopMCP() {
	r.mcp.Close()
	r.mcp = nil
	for _, sb := range r.mcpSandboxes {
		_ = sb.Close()
	}
	r.mcpSandboxes = nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mcpHoles are the holes a stdio server's sandbox opened, expanded.
type mcpHoles struct {
	writable []string
	network  bool
}

// mcpInfo is what run.started records of the servers (nil without any).
func (r *execRun) mcpInfo() []event.MCPServer {
	if r.mcp == nil {
		return nil
	}
	byName := map[string]mcp.Server{}
	for _, s := range r.mcpServers {
		byName[s.Name] = s
	}
	var out []event.MCPServer
	for _, info := range r.mcp.Servers() {
		s := byName[info.Name]
		h := r.mcpHoles[info.Name]
		out = append(out, event.MCPServer{Name: info.Name, Transport: info.Transport, Command: s.Command, URL: s.URL,
			Writable: h.writable, Network: h.network, ToolsListed: info.Listed, ToolsOffered: info.Offered})
	}
	return out
}

// mcpNote lists the servers for logs: "github (http, 12 of 40 tools)".
func (r *execRun) mcpNote() string {
	if r.mcp == nil {
		return ""
	}
	var parts []string
	for _, s := range r.mcp.Servers() {
		parts = append(parts, fmt.Sprintf("%s (%s, %d of %d tools)", s.Name, s.Transport, s.Offered, s.Listed))
	}
	return strings.Join(parts, ", ")
}
