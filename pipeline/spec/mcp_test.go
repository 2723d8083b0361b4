package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadMCP(t *testing.T) {
	s, err := Load("testdata/mcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := MCP{Servers: map[string]MCPServer{
		"github": {URL: "https://api.githubcopilot.com/mcp/", Timeout: 45 * time.Second,
			Headers: map[string]string{"Authorization": "Bearer ${GH_TOKEN}", "X-MCP-Readonly": "true"}},
		"docs": {Command: []string{"node", "server.js", "--stdio"},
			Env: map[string]string{"DOCS_TOKEN": "${DOCS_TOKEN}", "LOG_LEVEL": "warn"}},
	}}
	if diff := cmp.Diff(want, s.MCP); diff != "" {
		t.Errorf("MCP (-want +got):\n%s", diff)
	}
	rs, err := s.Ruleset()
	if err != nil {
		t.Fatal(err)
	}
	for target, allowed := range map[string]bool{
		"github/get_me": true, "github/create_issue": false, "docs/search": true, "other/x": false,
	} {
		if d := rs.Evaluate("mcp", target); d.Allowed != allowed {
			t.Errorf("mcp %s: allowed = %v, want %v (%s)", target, d.Allowed, allowed, d.Reason)
		}
	}
	if p, ok := s.Position("mcp.servers.docs.env.DOCS_TOKEN"); !ok || p.Line != 12 {
		t.Errorf("position of the env value = %v, %v", p, ok)
	}
}

func TestLoadMCPErrors(t *testing.T) {
	const srv = base + "mcp:\n  servers:\n"
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"no servers", base + "mcp: {}\n", []string{`4:6: mcp: missing required key "servers"`}},
		{"unknown key", srv + "    s: {command: [x], cwd: /}\n", []string{`6:23: unknown key "cwd" in mcp.servers.s`}},
		{"bad name", srv + "    'my server': {command: [x]}\n", []string{`6:5: mcp.servers: bad server name "my server" (use 1 to 32 letters, digits, '-' and '_')`}},
		{"both", srv + "    s: {command: [x], url: 'https://h/mcp'}\n", []string{`6:28: mcp.servers.s: both command and url`}},
		{"neither", srv + "    s: {timeout: 5s}\n", []string{`6:8: mcp.servers.s: missing command or url (add command: [prog, arg...] (stdio) or url: https://HOST/mcp (HTTP))`}},
		{"command string", srv + "    s: {command: 'npx -y srv'}\n", []string{`6:18: mcp.servers.s.command: expected a list [prog, arg...], got a string (write it as a list: ["npx", "-y", "srv"])`}},
		{"empty command", srv + "    s: {command: []}\n", []string{`6:18: mcp.servers.s.command: the program is missing`}},
		{"plain http", srv + "    s: {url: 'http://example.com/mcp'}\n", []string{`6:14: mcp.servers.s.url: url "http://example.com/mcp": use https`}},
		{"headers on stdio", srv + "    s: {command: [x], headers: {A: b}}\n", []string{`6:32: mcp.servers.s.headers: only for a server with url`}},
		{"env on http", srv + "    s: {url: 'https://h/mcp', env: {A: b}}\n", []string{`6:36: mcp.servers.s.env: only for a server with command`}},
		{"bad env name", srv + "    s: {command: [x], env: {A-B: c}}\n", []string{`6:29: mcp.servers.s.env: bad name "A-B" (a variable name such as GITHUB_TOKEN)`}},
		{"bad ref", srv + "    s: {command: [x], env: {A: '${B'}}\n", []string{`6:32: mcp.servers.s.env.A: malformed reference in "${B"`}},
		{"bad timeout", srv + "    s: {command: [x], timeout: 30}\n", []string{`6:32: mcp.servers.s.timeout: expected a duration`}},
		{"sandbox mode", srv + "    s: {command: [x], sandbox: {mode: off}}\n", []string{`6:39: mcp.servers.s.sandbox.mode: a server's sandbox has no mode of its own`}},
		{"sandbox on http", srv + "    s: {url: 'https://h/mcp', sandbox: {network: allow}}\n", []string{`6:40: mcp.servers.s.sandbox: only for a server with command`}},
		{"sandbox relative", srv + "    s: {command: [x], sandbox: {writable: [cache]}}\n", []string{`6:44: mcp.servers.s.sandbox.writable[0]: "cache" is a relative path`}},
		{"pattern without slash", base + "permissions:\n  mcp: {github: allow}\n", []string{`5:9: permissions.mcp["github"]: pattern "github" is not SERVER/TOOL (write "github/*"`}},
		{"undeclared server", srv + "    gh: {url: 'https://h/mcp'}\npermissions:\n  mcp: {'github/*': allow}\n", []string{
			`8:9: permissions.mcp["github/*"]: no MCP server "github" in mcp.servers (the servers are: gh)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("task.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), "task.yaml:"+w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestMCPSchemaAgreesWithLoad(t *testing.T) {
	sch := compileTaskSchema(t)
	const srv = base + "mcp:\n  servers:\n"
	bad := map[string]string{
		"both":             srv + "    s: {command: [x], url: 'https://h/mcp'}\n",
		"neither":          srv + "    s: {timeout: 5s}\n",
		"plain http":       srv + "    s: {url: 'http://example.com/mcp'}\n",
		"headers on stdio": srv + "    s: {command: [x], headers: {A: b}}\n",
		"env on http":      srv + "    s: {url: 'https://h/mcp', env: {A: b}}\n",
		"command string":   srv + "    s: {command: x}\n",
		"bad server name":  srv + "    'a b': {command: [x]}\n",
		"pattern":          base + "permissions: {mcp: {github: allow}}\n",
	}
	for name, spec := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := LoadBytes("bad.yaml", []byte(spec)); err == nil {
				t.Error("Load accepted it")
			}
			if err := sch.Validate(yamlToJSON(t, []byte(spec))); err == nil {
				t.Error("the schema accepted it")
			}
		})
	}
	good := srv + "    s: {url: 'http://127.0.0.1:8080/mcp', headers: {A: b}, timeout: 5s}\n    t: {command: [x, y], env: {K: v}}\npermissions: {mcp: {'s/*': allow, '*': deny}}\n"
	if _, err := LoadBytes("good.yaml", []byte(good)); err != nil {
		t.Errorf("Load: %v", err)
	}
	if err := sch.Validate(yamlToJSON(t, []byte(good))); err != nil {
		t.Errorf("schema: %v", err)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"TOKEN": "abc123", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	out, missing, values := Expand("Bearer ${TOKEN}${EMPTY} $HOME ${NOPE} $${TOKEN}", lookup)
	if out != "Bearer abc123 $HOME ${NOPE} $abc123" {
		t.Errorf("out = %q", out)
	}
	if !cmp.Equal(missing, []string{"NOPE"}) || !cmp.Equal(values, []string{"abc123", "", "abc123"}) {
		t.Errorf("missing = %q, values = %q", missing, values)
	}
}
