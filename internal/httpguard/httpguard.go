// Package httpguard keeps the credentials configured for one server (an
// MCP server's headers, the GitHub token, a model key) from reaching
// another origin that a redirect points at. Go's client drops
// Authorization only when the host name changes, not the port or scheme,
// and never drops a custom header such as X-Api-Key; a transport that
// adds headers adds them to the redirected request too.
//
// Imports: the standard library only.
package httpguard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is net/http's default limit.
const maxRedirects = 10

// Origin is u's scheme, host and port, lower-cased, with the scheme's
// default port written out: "https://api.github.com:443".
func Origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// safeHeaders are the headers a redirect to another origin keeps: none
// of them is configured by the user or authenticates the caller (an MCP
// session id was issued by the server the redirect reached).
func safeHeaders() []string {
	return []string{"Accept", "Accept-Encoding", "Accept-Language", "Cache-Control", "Content-Type", "User-Agent",
		"X-Github-Api-Version", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"}
}

// CheckRedirect is an http.Client CheckRedirect: at most 10 redirects,
// and on one to another origin than the first request's every header but
// safeHeaders is removed (Authorization, cookies, API keys, session ids).
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if len(via) == 0 || Origin(req.URL) == Origin(via[0].URL) {
		return nil
	}
	keep := http.Header{}
	for _, h := range safeHeaders() {
		if v, ok := req.Header[h]; ok {
			keep[h] = v
		}
	}
	req.Header = keep
	return nil
}

// Client returns a copy of c (nil: a new client) whose CheckRedirect is
// CheckRedirect, unless c already has one.
func Client(c *http.Client) *http.Client {
	if c == nil {
		return &http.Client{CheckRedirect: CheckRedirect}
	}
	cc := *c
	if cc.CheckRedirect == nil {
		cc.CheckRedirect = CheckRedirect
	}
	return &cc
}

// HeaderTransport adds Headers to requests for one of Origins (Origin
// strings) and to no other, so a redirect elsewhere goes without them.
type HeaderTransport struct {
	Base    http.RoundTripper // nil: http.DefaultTransport
	Origins []string
	Headers http.Header
}

// RoundTrip adds the headers when the request's origin is one of Origins.
func (t *HeaderTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if len(t.Headers) == 0 || !t.allowed(req.URL) {
		return base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range t.Headers {
		req.Header[k] = v
	}
	return base.RoundTrip(req)
}

func (t *HeaderTransport) allowed(u *url.URL) bool {
	o := Origin(u)
	for _, a := range t.Origins {
		if a == o {
			return true
		}
	}
	return false
}

// OriginOf is Origin of the URL raw, "" when it does not parse.
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return Origin(u)
}
