package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/tools/mcp"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// MCP is the "mcp" section: Model Context Protocol servers whose tools
// the agent may use (each tool only when permissions.mcp allows
// "SERVER/TOOL").
type MCP struct {
	// Servers by name ("servers"): letters, digits, '-' and '_'.
	Servers map[string]MCPServer
}

// MCPServer is one entry of mcp.servers. Exactly one of Command and URL is
// set. Header and env values may hold ${NAME} references, resolved from the
// runner's environment when the run starts (Expand).
type MCPServer struct {
	Command []string          // "command": a stdio server's program and arguments
	URL     string            // "url": a streamable HTTP endpoint (https://)
	Headers map[string]string // "headers": sent with every request (HTTP only)
	Env     map[string]string // "env": a stdio server's whole environment
	Timeout time.Duration     // "timeout": per call, and for start-up (0: 30s)
	// Sandbox ("sandbox") opens a stdio server's own holes in the task's
	// sandbox: writable paths and the network (its Mode is always empty:
	// the task's sandbox.mode applies). A server gets none of the holes of
	// the task's sandbox section.
	Sandbox Sandbox
}

var (
	// refPattern is one ${NAME} reference.
	refPattern = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	// headerName is an HTTP header field name (RFC 9110 token).
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Expand replaces every ${NAME} in v with lookup(NAME). It returns the
// names lookup did not have (v keeps those references) and the values it
// put in, which are secrets to redact.
func Expand(v string, lookup func(string) (string, bool)) (out string, missing, values []string) {
	out = refPattern.ReplaceAllStringFunc(v, func(ref string) string {
		name := ref[2 : len(ref)-1]
		val, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
			return ref
		}
		values = append(values, val)
		return val
	})
	return out, missing, values
}

// mcpSection decodes "mcp".
func (d *Decoder) mcpSection(path string, n *yaml.Node) MCP {
	var m MCP
	seen := d.Mapping(path, n, FieldFuncs{
		"servers": func(p string, n *yaml.Node) { m.Servers = d.mcpServers(p, n) },
	})
	d.Require(path, deref(n), seen, "servers")
	return m
}

// mcpServers decodes mcp.servers: name → server.
func (d *Decoder) mcpServers(path string, n *yaml.Node) map[string]MCPServer {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(path, n, "a mapping of server names", "")
		return nil
	}
	out := map[string]MCPServer{}
	for key, val := range d.Pairs(path, n) {
		p := joinPath(path, key.Value)
		if !mcp.ValidServerName(key.Value) {
			d.ErrorAt(key, fmt.Sprintf("use 1 to %d letters, digits, '-' and '_'", mcp.MaxServerName), "%s: bad server name %q", path, key.Value)
			continue
		}
		d.pos[p] = posOf(key)
		out[key.Value] = d.mcpServer(p, val)
	}
	return out
}

// mcpServer decodes one server entry and checks that its keys fit its
// transport.
func (d *Decoder) mcpServer(path string, n *yaml.Node) MCPServer {
	var s MCPServer
	seen := d.Mapping(path, n, FieldFuncs{
		"command": func(p string, n *yaml.Node) { s.Command = d.command(p, n) },
		"url":     func(p string, n *yaml.Node) { s.URL = d.mcpURL(p, n) },
		"headers": func(p string, n *yaml.Node) {
			s.Headers = d.refMap(p, n, headerName, "an HTTP header name such as Authorization")
		},
		"env": func(p string, n *yaml.Node) {
			s.Env = d.refMap(p, n, identPattern, "a variable name such as GITHUB_TOKEN")
		},
		"timeout": func(p string, n *yaml.Node) { s.Timeout = d.Duration(p, n) },
		"sandbox": func(p string, n *yaml.Node) { s.Sandbox = d.serverSandbox(p, n) },
	})
	if seen == nil {
		return s
	}
	if sb, ok := seen["sandbox"]; ok && len(s.Command) == 0 {
		d.ErrorAt(sb, "the sandbox holds processes the runner starts; an HTTP server runs elsewhere", "%s.sandbox: only for a server with command", path)
	}
	_, hasCmd := seen["command"]
	_, hasURL := seen["url"]
	switch {
	case hasCmd && hasURL:
		d.ErrorAt(seen["url"], "a server is either a process (command) or an HTTP endpoint (url)", "%s: both command and url", path)
	case !hasCmd && !hasURL:
		d.ErrorAt(deref(n), `add command: [prog, arg...] (stdio) or url: https://HOST/mcp (HTTP)`, "%s: missing command or url", path)
	}
	if h, ok := seen["headers"]; ok && !hasURL {
		d.ErrorAt(h, "headers are sent to HTTP servers; give a stdio server env instead", "%s.headers: only for a server with url", path)
	}
	if e, ok := seen["env"]; ok && !hasCmd {
		d.ErrorAt(e, "env is a stdio server's environment; give an HTTP server headers instead", "%s.env: only for a server with command", path)
	}
	return s
}

// serverSandbox decodes a server's sandbox holes: writable and network,
// as in the task's sandbox section, without mode.
func (d *Decoder) serverSandbox(path string, n *yaml.Node) Sandbox {
	sb := d.sandbox(path, n)
	if sb.Mode != "" {
		p := d.pos[path+".mode"]
		d.ErrorAtPos(p, "the task's sandbox.mode applies to every process it starts", "%s.mode: a server's sandbox has no mode of its own", path)
		sb.Mode = ""
	}
	if sb.Allow != nil {
		p := d.pos[path+".network"]
		d.ErrorAtPos(p, "a server's network is allow or deny; the allow list is the task's (sandbox.network.allow)", "%s.network: a server's sandbox has no allow list", path)
		sb.Allow = nil
	}
	return sb
}

// command decodes [prog, arg...]: a non-empty list of strings, the first
// not blank.
func (d *Decoder) command(path string, n *yaml.Node) []string {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		d.ErrorAt(n, fmt.Sprintf("write it as a list: %s", listHint(n.Value)), "%s: expected a list [prog, arg...], got a string", path)
		return nil
	}
	args := d.StrList(path, n, d.Str)
	if n.Kind == yaml.SequenceNode && (len(args) == 0 || strings.TrimSpace(args[0]) == "") {
		d.ErrorAt(n, "name the program first: [prog, arg...]", "%s: the program is missing", path)
	}
	return args
}

// listHint suggests the list form of a command line written as a string.
func listHint(s string) string {
	f := strings.Fields(s)
	q := make([]string, len(f))
	for i, w := range f {
		q[i] = fmt.Sprintf("%q", w)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// mcpURL decodes an endpoint URL (https://, or http:// to loopback).
func (d *Decoder) mcpURL(path string, n *yaml.Node) string {
	s := d.NonEmpty(path, n)
	if s == "" || !isString(n) {
		return s
	}
	if err := mcp.CheckURL(s); err != nil {
		d.ErrorAt(n, "", "%s: %v", path, err)
	}
	return s
}

// refMap decodes a mapping of names (matching keyPattern) to string
// values whose ${NAME} references are well formed.
func (d *Decoder) refMap(path string, n *yaml.Node, keyPattern *regexp.Regexp, keyHint string) map[string]string {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(path, n, "a mapping of names to strings", "")
		return nil
	}
	out := map[string]string{}
	for key, val := range d.Pairs(path, n) {
		p := joinPath(path, key.Value)
		if !keyPattern.MatchString(key.Value) {
			d.ErrorAt(key, keyHint, "%s: bad name %q", path, key.Value)
			continue
		}
		d.pos[p] = posOf(val)
		v := d.Str(p, val)
		if rest := refPattern.ReplaceAllString(v, ""); strings.Contains(rest, "${") {
			d.ErrorAt(val, "write ${NAME} with a variable name of letters, digits and _", "%s: malformed reference in %q", p, v)
		}
		out[key.Value] = v
	}
	return out
}

// checkMCPRules reports mcp permission patterns that name a server the
// spec does not declare (a typo would silently allow nothing).
func (d *Decoder) checkMCPRules(s *Spec) {
	rules, ok := s.Permissions[mcp.Permission].(map[string]any)
	if !ok {
		return
	}
	names := make([]string, 0, len(s.MCP.Servers))
	for name := range s.MCP.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for pat := range rules {
		server, _, _ := strings.Cut(pat, "/")
		if strings.ContainsAny(server, "*?") || slices.Contains(names, server) {
			continue
		}
		p := fmt.Sprintf("permissions.mcp[%q]", pat)
		hint := "declare it under mcp.servers"
		if len(names) > 0 {
			hint = "the servers are: " + strings.Join(names, ", ")
		}
		d.ErrorAtPos(d.pos[p], hint, "%s: no MCP server %q in mcp.servers", p, server)
	}
}

// MCPQuery is the `runner policy check --mcp SERVER/TOOL` question for
// this spec. An error says that target is not SERVER/TOOL or names a
// server the spec does not declare; it is about the flag, not the spec or
// its inputs, so it wraps no sentinel of this package (the CLI reports it
// as a usage error).
func (s *Spec) MCPQuery(target string) (permission.Query, error) {
	server, tool, ok := strings.Cut(target, "/")
	if !ok || server == "" || tool == "" {
		return permission.Query{}, fmt.Errorf("--mcp %q: write SERVER/TOOL, e.g. github/get_me", target)
	}
	if _, ok := s.MCP.Servers[server]; !ok {
		names := make([]string, 0, len(s.MCP.Servers))
		for n := range s.MCP.Servers {
			names = append(names, n)
		}
		slices.Sort(names)
		list := "it declares none"
		if len(names) > 0 {
			list = "its servers are: " + strings.Join(names, ", ")
		}
		return permission.Query{}, fmt.Errorf("--mcp %q: the task has no MCP server %q (%s)", target, server, list)
	}
	return permission.Query{Permission: permission.MCP, Target: target}, nil
}
