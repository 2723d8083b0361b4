package spec

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// Sandbox is the "sandbox" section: how commands the agent and the checks
// run are contained by the OS, and the holes opened in that containment.
// The zero value is the default: mode auto, no extra writable path, no
// network.
type Sandbox struct {
	// Mode is "mode": auto (default: the strongest layers available; bash
	// and checks refused when there are none), required (refuse to start
	// unless every layer is available) or off (unsandboxed, said loudly).
	Mode sandbox.Mode
	// Writable are "writable": more read-write directories such as build
	// caches, each absolute, "~/…" (the runner's $HOME) or starting with
	// "$NAME" / "${NAME}" (from the runner's environment), e.g. "$GOCACHE",
	// "~/.npm". Expanded when the run starts (ExpandPath).
	Writable []string
	// Network is "network: allow" (default deny: an empty network
	// namespace, loopback only).
	Network bool
	// Allow is "network: {allow: [...]}": the hosts (host, host:port,
	// *.domain, IP addresses; no port means 80 and 443) commands reach
	// through the runner's proxy (tools/sandbox/netproxy); nil when the
	// network is denied or allowed whole.
	Allow []string
	// AllowBroad is "allow_broad: true": a Writable entry may be / , the
	// runner's $HOME or a directory holding it or the work tree (refused
	// otherwise: BroadWritable).
	AllowBroad bool
}

// ModeOrDefault is the mode, auto when the spec gives none.
func (s Sandbox) ModeOrDefault() sandbox.Mode {
	if s.Mode == "" {
		return sandbox.ModeAuto
	}
	return s.Mode
}

// sandbox decodes "sandbox".
func (d *Decoder) sandbox(path string, n *yaml.Node) Sandbox {
	var s Sandbox
	d.Mapping(path, n, FieldFuncs{
		"mode": func(p string, n *yaml.Node) {
			v := d.Str(p, n)
			if isString(n) && !slices.Contains(sandbox.Modes(), sandbox.Mode(v)) {
				d.ErrorAt(n, "use auto (the default), required or off", "%s: unknown sandbox mode %q", p, v)
			}
			s.Mode = sandbox.Mode(v)
		},
		"writable": func(p string, n *yaml.Node) {
			s.Writable = d.StrList(p, n, func(p string, n *yaml.Node) string {
				v := d.NonEmpty(p, n)
				d.pos[p] = posOf(n)
				if v != "" && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~/") && !strings.HasPrefix(v, "$") {
					d.ErrorAt(n, "the work tree is writable already; give an absolute path, ~/… or $NAME/… (e.g. $GOCACHE, ~/.npm)",
						"%s: %q is a relative path", p, v)
				}
				return v
			})
		},
		"network":     func(p string, n *yaml.Node) { d.network(&s, p, n) },
		"allow_broad": func(p string, n *yaml.Node) { s.AllowBroad = d.Boolean(p, n) },
	})
	if !s.AllowBroad {
		for i, w := range s.Writable {
			p := fmt.Sprintf("%s.writable[%d]", path, i)
			if what := broadLiteral(w); what != "" {
				d.ErrorAtPos(d.pos[p], BroadHint, "%s: %q makes %s writable to every command", p, w, what)
			}
		}
	}
	return s
}

// BroadHint is how to fix a sandbox.writable entry that BroadWritable or
// the spec's own check refuses.
const BroadHint = "name the cache directory itself, e.g. $GOCACHE, ~/.npm, ~/.cache/pip; " +
	"if commands really must write there, add allow_broad: true to the same sandbox section"

// broadLiteral says what a writable entry opens when it is too broad by
// its text alone ("/", "~/", "$HOME", "${HOME}", with nothing but
// slashes and dots after), "" otherwise.
func broadLiteral(w string) string {
	rest, home := w, false
	for _, pre := range []string{"~/", "${HOME}", "$HOME"} {
		if r, ok := strings.CutPrefix(w, pre); ok && (pre != "$HOME" || r == "" || r[0] == '/') {
			rest, home = "/"+r, true
			break
		}
	}
	if !strings.HasPrefix(rest, "/") || path.Clean(rest) != "/" {
		return ""
	}
	if home {
		return "the runner's whole $HOME (credential stores, shell startup files, other checkouts)"
	}
	return "the whole file system"
}

// BroadWritable says what the expanded writable path p opens when it is
// too broad for a build cache, "" when it is not: the root, the runner's
// $HOME (home) or a directory holding it, the work tree itself (writable
// already; its .git stays read-only only when no writable hole holds it)
// or a directory holding it. Paths are absolute and cleaned here.
func BroadWritable(p, home, workTree string) string {
	p = filepath.Clean(p)
	switch {
	case p == "/":
		return "the whole file system"
	case home != "" && within(filepath.Clean(home), p):
		return fmt.Sprintf("the runner's $HOME (%s) and all below it (credential stores, shell startup files, other checkouts)", home)
	case workTree != "" && filepath.Clean(workTree) == p:
		return "the work tree itself, its .git included (the work tree is writable already)"
	case workTree != "" && within(filepath.Clean(workTree), p):
		return fmt.Sprintf("a directory holding the work tree (%s): its .git and the checkouts beside it", workTree)
	}
	return ""
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// ErrUnset is returned (wrapped) by ExpandPath when the entry's variable is
// unset or empty: the runner skips that hole and says so (a cache the
// environment does not name is the tool's default, in the sandbox's
// private $HOME).
var ErrUnset = errors.New("variable not set")

// ExpandPath expands a "writable" entry: a leading "~/" with getenv("HOME"),
// a leading "$NAME" or "${NAME}" with getenv(NAME). It fails, naming the
// entry, when a variable is unset or empty (ErrUnset) or the result is not
// absolute.
func ExpandPath(p string, getenv func(string) string) (string, error) {
	name, rest := "", ""
	switch {
	case strings.HasPrefix(p, "~/"):
		name, rest = "HOME", p[1:]
	case strings.HasPrefix(p, "${"):
		end := strings.IndexByte(p, '}')
		if end < 0 {
			return "", fmt.Errorf("sandbox.writable: %q has no closing }", p)
		}
		name, rest = p[2:end], p[end+1:]
	case strings.HasPrefix(p, "$"):
		end := strings.IndexFunc(p[1:], func(r rune) bool {
			return r != '_' && !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9')
		})
		if end < 0 {
			end = len(p) - 1
		}
		name, rest = p[1:end+1], p[end+1:]
	}
	out := p
	if name != "" {
		v := getenv(name)
		if v == "" {
			return "", fmt.Errorf("sandbox.writable: %q: $%s is not set in the runner's environment: %w", p, name, ErrUnset)
		}
		out = v + rest
	}
	if !strings.HasPrefix(out, "/") {
		return "", fmt.Errorf("sandbox.writable: %q expands to %q, not an absolute path", p, out)
	}
	return out, nil
}
