package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/proxy"
)

// upstreamFor is the proxy the runner itself goes through to reach
// hostport with scheme (nil: dial directly).
func (s *Server) upstreamFor(scheme, hostport string) (*url.URL, error) {
	if s.opts.Upstream == nil {
		return nil, nil
	}
	return s.opts.Upstream(&url.URL{Scheme: scheme, Host: hostport})
}

// dialTarget opens a connection to an allowed hostport for a CONNECT
// tunnel: through the runner's own proxy when its environment names one
// for https, else directly (dialUpstream).
func (s *Server) dialTarget(ctx context.Context, hostport string) (net.Conn, error) {
	up, err := s.upstreamFor("https", hostport)
	if err != nil {
		return nil, err
	}
	if up == nil {
		return s.dialUpstream(ctx, "tcp", hostport)
	}
	return dialThrough(ctx, up, hostport)
}

// dialThrough opens a tunnel to hostport through the proxy up: HTTP
// CONNECT for http:// and https:// proxies (credentials in the URL go in
// Proxy-Authorization), the SOCKS5 protocol for socks5:// ones. Errors
// name the proxy without its password.
func dialThrough(ctx context.Context, up *url.URL, hostport string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout}
	switch up.Scheme {
	case "socks5", "socks5h":
		sd, err := proxy.FromURL(up, d)
		if err != nil {
			return nil, fmt.Errorf("the egress proxy %s (the runner's HTTPS_PROXY): %w", up.Redacted(), err)
		}
		c, err := sd.(proxy.ContextDialer).DialContext(ctx, "tcp", hostport)
		if err != nil {
			return nil, fmt.Errorf("through the egress proxy %s (the runner's HTTPS_PROXY): %w", up.Redacted(), err)
		}
		return c, nil
	case "http", "https":
	default:
		return nil, fmt.Errorf("the egress proxy %s (the runner's HTTPS_PROXY): scheme %q is not supported (http, https, socks5)", up.Redacted(), up.Scheme)
	}
	addr := up.Host
	if up.Port() == "" {
		addr = net.JoinHostPort(up.Hostname(), map[string]string{"http": "80", "https": "443"}[up.Scheme])
	}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("the egress proxy %s (the runner's HTTPS_PROXY): %w", up.Redacted(), err)
	}
	if up.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: up.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("the egress proxy %s (the runner's HTTPS_PROXY): %w", up.Redacted(), err)
		}
		c = tc
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: hostport}, Host: hostport, Header: http.Header{}}
	if u := up.User; u != nil {
		pass, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pass)))
	}
	deadline := time.Now().Add(dialTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	br := bufio.NewReader(c)
	resp, err := func() (*http.Response, error) {
		if err := req.Write(c); err != nil {
			return nil, err
		}
		return http.ReadResponse(br, req)
	}()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s through the egress proxy %s (the runner's HTTPS_PROXY): %w", hostport, up.Redacted(), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("the egress proxy %s (the runner's HTTPS_PROXY) answered %q to CONNECT %s", up.Redacted(), resp.Status, hostport)
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 { // the tunnel's first bytes came with the answer
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// bufferedConn reads what a bufio.Reader already holds before the rest.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// CloseWrite half-closes the connection underneath when it can.
func (b *bufferedConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return b.Conn.Close()
}

// routeTransport sends a plain HTTP request through the runner's own
// proxy when its environment names one for the URL, else directly.
type routeTransport struct {
	s             *Server
	direct, viaUp *http.Transport
}

func (t *routeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	up, err := t.s.upstreamFor(r.URL.Scheme, r.URL.Host)
	if err != nil {
		return nil, err
	}
	if up == nil {
		return t.direct.RoundTrip(r)
	}
	return t.viaUp.RoundTrip(r)
}

// CloseIdleConnections closes both transports' idle connections.
func (t *routeTransport) CloseIdleConnections() {
	t.direct.CloseIdleConnections()
	t.viaUp.CloseIdleConnections()
}
