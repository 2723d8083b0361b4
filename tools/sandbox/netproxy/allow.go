// Package netproxy is the network allow list of the sandbox
// (sandbox.network: {allow: [...]} in the task spec): an HTTP proxy that
// runs in the runner, outside the sandbox, listening on a unix socket, and
// speaks HTTP CONNECT (tunnels: HTTPS, git over https, any TLS client) and
// plain HTTP forward proxying (an absolute-form request line). It resolves
// and dials only the hosts and ports the allow list names; any other
// request gets 403 Forbidden with a body that names the host and says how
// to allow it. Every decision is counted per host:port (Accesses), not
// recorded per request.
//
// Commands reach the socket through a forwarder on 127.0.0.1 that the
// sandbox provides (tools/sandbox): HTTP_PROXY and friends point there.
// The proxy does not look inside tunnels (no TLS interception): what it
// decides on is the name and port of the CONNECT line or of the absolute
// URL, as Claude Code's proxy does.
//
// Imports: the standard library only.
package netproxy

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// WebPorts are the ports an entry without a port allows.
var webPorts = []int{80, 443}

// Entry is one allow list entry: a host name (lower case, no trailing
// dot), a "*.suffix" wildcard or an IP address, and a port (0: the web
// ports 80 and 443).
type Entry struct {
	// Text is the entry as written.
	Text string
	// Host is the name or address; for a wildcard, the suffix with its
	// leading dot (".example.com").
	Host     string
	Wildcard bool
	Port     int
}

// ParseEntry parses "host", "host:port", "*.example.com[:port]", an IPv4
// address or a bracketed IPv6 address with an optional port. The error
// says what is wrong and how to write it.
func ParseEntry(s string) (Entry, error) {
	e := Entry{Text: s}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Hostname() != "" {
		return e, fmt.Errorf("%q is a URL, not a host: write %q", s, u.Host)
	}
	if strings.ContainsAny(s, "/@ ") {
		return e, fmt.Errorf("%q is not a host name, \"*.domain\", IP address or one of those with \":port\" (write the host alone: no scheme, path or user, e.g. \"example.com\")", s)
	}
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	} else if strings.Count(s, ":") > 1 {
		return e, fmt.Errorf("%q: write an IPv6 address in brackets, e.g. \"[::1]:8080\"", s)
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return e, fmt.Errorf("%q: port %q is not a number from 1 to 65535", s, port)
		}
		e.Port = n
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		e.Wildcard, host = true, "."+rest
		if !validName(rest) || !strings.Contains(rest, ".") && rest != "localhost" {
			return e, fmt.Errorf("%q: a wildcard is \"*.\" and a domain of at least two labels, e.g. \"*.example.com\"", s)
		}
		e.Host = host
		return e, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		e.Host = a.Unmap().String()
		return e, nil
	}
	if !validName(host) {
		return e, fmt.Errorf("%q is not a host name, \"*.domain\", IP address or one of those with \":port\" (e.g. \"proxy.golang.org\", \"*.npmjs.org\", \"10.0.0.5:8080\")", s)
	}
	e.Host = host
	return e, nil
}

// validName reports whether s is a DNS name: labels of letters, digits,
// '-' and '_', 1 to 63 bytes each, 253 in all.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// matches reports whether the entry allows host (normalised: lower case,
// no trailing dot, an address in its canonical form) on port.
func (e Entry) matches(host string, port int) bool {
	if e.Port == 0 && !slices.Contains(webPorts, port) || e.Port != 0 && e.Port != port {
		return false
	}
	if e.Wildcard {
		return strings.HasSuffix(host, e.Host) && len(host) > len(e.Host)
	}
	return host == e.Host
}

// List is a parsed allow list.
type List []Entry

// ParseList parses every entry; the error names the first bad one.
func ParseList(entries []string) (List, error) {
	out := make(List, 0, len(entries))
	for _, s := range entries {
		e, err := ParseEntry(s)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Allows reports whether the list allows host (any case, a trailing dot,
// an address in any form) on port.
func (l List) Allows(host string, port int) bool {
	h := normalHost(host)
	return slices.ContainsFunc(l, func(e Entry) bool { return e.matches(h, port) })
}

// AllowsLoopback reports whether the list names localhost or a loopback
// address: then requests to the runner's own loopback go through the
// proxy (NO_PROXY does not list them).
func (l List) AllowsLoopback() bool {
	return slices.ContainsFunc(l, func(e Entry) bool {
		if a, err := netip.ParseAddr(e.Host); err == nil {
			return a.IsLoopback()
		}
		return e.Host == "localhost" || e.Host == ".localhost"
	})
}

// normalHost is host lower case, without a trailing dot or IPv6 zone
// brackets, an address in its canonical form.
func normalHost(host string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}
