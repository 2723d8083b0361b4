package spec

import (
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

func TestSandboxSection(t *testing.T) {
	s, err := LoadBytes("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if s.Sandbox.ModeOrDefault() != sandbox.ModeAuto || s.Sandbox.Network || len(s.Sandbox.Writable) > 0 {
		t.Errorf("default sandbox section: %+v", s.Sandbox)
	}
	tests := []struct{ yaml, want string }{
		{"sandbox: {mode: strict}", `4:17: sandbox.mode: unknown sandbox mode "strict" (use auto (the default), required or off)`},
		{"sandbox: {network: yes}", `4:20: sandbox.network: "yes" is not allow or deny`},
		{"sandbox: {writable: [build/cache]}", `4:22: sandbox.writable[0]: "build/cache" is a relative path (the work tree is writable already`},
		{"sandbox: {writable: $GOCACHE}", `4:21: sandbox.writable: expected a list`},
		{"sandbox: {netwrk: allow}", `unknown key "netwrk" in sandbox (did you mean "network"?)`},
		{"sandbox: {writable: [$GOCACHE, /]}", `4:32: sandbox.writable[1]: "/" makes the whole file system writable to every command (name the cache directory itself`},
		{"sandbox: {writable: [\"~/\"]}", `4:22: sandbox.writable[0]: "~/" makes the runner's whole $HOME`},
		{"sandbox: {writable: [$HOME]}", `sandbox.writable[0]: "$HOME" makes the runner's whole $HOME`},
		{"sandbox: {writable: [\"${HOME}/.\"]}", `sandbox.writable[0]: "${HOME}/." makes the runner's whole $HOME`},
		{"sandbox: {writable: [/usr/..//]}", `"/usr/..//" makes the whole file system writable`},
		{"sandbox: {writable: [/], allow_broad: maybe}", `sandbox.allow_broad`},
	}
	for _, tt := range tests {
		_, err := LoadBytes("t.yaml", []byte(base+tt.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
}

func TestExpandPath(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "GOCACHE": "/c/go", "EMPTY": "", "REL": "rel"}
	getenv := func(k string) string { return env[k] }
	tests := []struct{ in, want, err string }{
		{"/abs/x", "/abs/x", ""},
		{"~/.npm", "/home/u/.npm", ""},
		{"$GOCACHE", "/c/go", ""},
		{"$GOCACHE/sub", "/c/go/sub", ""},
		{"${GOCACHE}x", "/c/gox", ""},
		{"$EMPTY/x", "", "$EMPTY is not set"},
		{"$MISSING", "", "$MISSING is not set"},
		{"${GOCACHE", "", "no closing }"},
		{"$REL/x", "", `expands to "rel/x", not an absolute path`},
	}
	for _, tt := range tests {
		got, err := ExpandPath(tt.in, getenv)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ExpandPath(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ExpandPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestSandboxNetworkAllow: the allow list form, and its errors at the
// entry's position with how to write it; the scalar forms still work.
func TestSandboxNetworkAllow(t *testing.T) {
	s, err := LoadBytes("t.yaml", []byte(base+"sandbox: {network: {allow: [proxy.golang.org, \"*.npmjs.org\", \"127.0.0.1:8080\"]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Sandbox.Network || strings.Join(s.Sandbox.Allow, " ") != "proxy.golang.org *.npmjs.org 127.0.0.1:8080" {
		t.Errorf("allow list: %+v", s.Sandbox)
	}
	for _, y := range []string{"sandbox: {network: allow}", "sandbox: {network: deny}"} {
		s, err := LoadBytes("t.yaml", []byte(base+y+"\n"))
		if err != nil || s.Sandbox.Allow != nil || s.Sandbox.Network != strings.HasSuffix(y, "allow}") {
			t.Errorf("%s: %+v %v", y, s, err)
		}
	}
	tests := []struct{ yaml, want string }{
		{"sandbox: {network: {allow: [ok.example, \"http://x.example\"]}}", `4:41: sandbox.network.allow[1]: "http://x.example" is a URL, not a host: write "x.example"`},
		{"sandbox: {network: {allow: [\"x.example:99999\"]}}", `4:29: sandbox.network.allow[0]: "x.example:99999": port "99999" is not a number from 1 to 65535`},
		{"sandbox: {network: {allow: [\"*.com\"]}}", `a wildcard is "*." and a domain of at least two labels`},
		{"sandbox: {network: {allow: []}}", `4:28: sandbox.network.allow: the allow list is empty (list the hosts commands may reach, or write network: deny)`},
		{"sandbox: {network: {alow: [x.example]}}", `unknown key "alow" in sandbox.network (did you mean "allow"?)`},
		{"sandbox: {network: maybe}", `sandbox.network: "maybe" is not allow or deny (use allow, deny (the default) or {allow: [host, host:port, ...]})`},
	}
	for _, tt := range tests {
		_, err := LoadBytes("t.yaml", []byte(base+tt.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
}

// TestSandboxAllowBroad: allow_broad: true lets the broad entries through
// (the author's explicit choice); narrow ones never needed it.
func TestSandboxAllowBroad(t *testing.T) {
	for _, yml := range []string{"sandbox: {writable: [/, ~/, $HOME], allow_broad: true}", "sandbox: {writable: [$HOMEBREW_CACHE, ~/.npm, /opt/cache, $HOME/.cache/pip]}"} {
		if _, err := LoadBytes("t.yaml", []byte(base+yml+"\n")); err != nil {
			t.Errorf("%s: %v", yml, err)
		}
	}
}

// TestBroadWritable: the expanded path is judged against the runner's
// $HOME and the work tree.
func TestBroadWritable(t *testing.T) {
	for _, tt := range []struct{ p, want string }{
		{"/", "the whole file system"},
		{"/home", "the runner's $HOME (/home/u)"},
		{"/home/u/", "the runner's $HOME (/home/u)"},
		{"/home/u/src", "a directory holding the work tree (/home/u/src/repo)"},
		{"/home/u/src/repo", "the work tree itself"},
		{"/home/u/.cache/go-build", ""},
		{"/home/u/src/repo/build", ""},
		{"/home/u/src/repo2", ""},
		{"/home/uu", ""},
		{"/tmp/cache", ""},
	} {
		got := BroadWritable(tt.p, "/home/u", "/home/u/src/repo")
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("BroadWritable(%q) = %q, want %q", tt.p, got, tt.want)
		}
	}
}
