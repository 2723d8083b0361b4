package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Access is what the proxy decided for one host:port, and how often.
type Access struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	// Requests counts the CONNECT tunnels and plain HTTP requests.
	Requests int `json:"requests"`
	// Failed counts the allowed ones whose upstream could not be reached
	// (the client got 502 Bad Gateway).
	Failed int `json:"failed,omitempty"`
	// Error is the first upstream error of an allowed host ("" when none).
	Error string `json:"error,omitempty"`
}

// Options configure a Server.
type Options struct {
	// Allow is the allow list.
	Allow List
	// Resolve looks a host name up (nil: net.DefaultResolver). Tests
	// resolve names to 127.0.0.1 with it.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// LoopbackNames lets a host name resolve to a loopback address. Off,
	// a name that resolves to the runner machine's own loopback is
	// refused unless the list names that address itself (see
	// internalAddr); tests whose upstreams listen on 127.0.0.1 turn it on.
	// Link-local and unspecified addresses stay refused.
	LoopbackNames bool
	// Upstream is the proxy the runner itself reaches target through
	// (nil, or a nil URL: directly). The pipeline sets it from the
	// runner's HTTPS_PROXY, HTTP_PROXY and NO_PROXY, so that an allowed
	// host is reached through a company's egress proxy. Through it the
	// proxy resolves no names: the egress proxy does.
	Upstream func(target *url.URL) (*url.URL, error)
	// OnFirst, when not nil, is called (from the request's goroutine) the
	// first time a host:port is allowed or denied.
	OnFirst func(Access)
}

// Server is the proxy. Close stops it.
type Server struct {
	opts     Options
	ln       net.Listener
	srv      *http.Server
	rp       *httputil.ReverseProxy
	mu       sync.Mutex
	accesses []*Access
	tunnels  sync.WaitGroup
	conns    map[net.Conn]struct{} // hijacked tunnel ends, closed by Close
}

// dialTimeout bounds the connection to an upstream.
const dialTimeout = 30 * time.Second

// Listen starts a proxy on a new unix socket at path (mode 0600; a stale
// file there is removed first) and serves it until Close (ctx bounds the
// listen call only).
func Listen(ctx context.Context, path string, opts Options) (*Server, error) {
	_ = os.Remove(path)
	ln, err := (&net.ListenConfig{}).Listen(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("netproxy: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	return Serve(ln, opts), nil
}

// Serve serves the proxy on ln until Close.
func Serve(ln net.Listener, opts Options) *Server {
	s := &Server{opts: opts, ln: ln, conns: map[net.Conn]struct{}{}}
	tr := &routeTransport{s: s,
		direct: &http.Transport{
			Proxy:                 nil, // Upstream decides, in routeTransport
			DialContext:           s.dialUpstream,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 5 * time.Minute,
		},
		viaUp: &http.Transport{
			Proxy: func(r *http.Request) (*url.URL, error) { return s.upstreamFor(r.URL.Scheme, r.URL.Host) },
			// the runner's own proxy, which its environment names, is dialled as it is
			DialContext:           (&net.Dialer{Timeout: dialTimeout}).DialContext,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 5 * time.Minute,
		},
	}
	s.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL // absolute form: scheme, host and path as asked
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del("Proxy-Authorization")
			pr.Out.Header.Del("Proxy-Connection")
		},
		Transport:    tr,
		ErrorHandler: s.upstreamFailed,
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: time.Minute}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Addr is the listener's address (the socket's path).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the proxy: the listener, open requests and tunnels.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.tunnels.Wait()
	if t, ok := s.rp.Transport.(*routeTransport); ok {
		t.CloseIdleConnections()
	}
	return err
}

// Accesses are the decisions so far, in the order each host:port was
// first seen.
func (s *Server) Accesses() []Access {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Access, len(s.accesses))
	for i, a := range s.accesses {
		out[i] = *a
	}
	return out
}

// record counts one request to host:port and returns whether it is
// allowed.
func (s *Server) record(host string, port int) bool {
	allowed := s.opts.Allow.Allows(host, port)
	host = normalHost(host)
	s.mu.Lock()
	i := slices.IndexFunc(s.accesses, func(a *Access) bool { return a.Host == host && a.Port == port })
	first := i < 0
	if first {
		s.accesses = append(s.accesses, &Access{Host: host, Port: port, Allowed: allowed})
		i = len(s.accesses) - 1
	}
	s.accesses[i].Requests++
	a := *s.accesses[i]
	s.mu.Unlock()
	if first && s.opts.OnFirst != nil {
		s.opts.OnFirst(a)
	}
	return allowed
}

// failed counts an allowed request whose upstream was not reached.
func (s *Server) failed(hostport string, err error) {
	host, port := splitHostPort(hostport, 0)
	host = normalHost(host)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.accesses {
		if a.Host == host && a.Port == port {
			a.Failed++
			if a.Error == "" {
				a.Error = err.Error()
			}
		}
	}
}

// ServeHTTP handles CONNECT and absolute-form requests.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		s.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "runner: this is the sandbox's HTTP proxy: send absolute URLs (http://host/path) or CONNECT host:port", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		http.Error(w, fmt.Sprintf("runner: the sandbox's proxy forwards http:// URLs; for %s:// use CONNECT (HTTPS_PROXY)", r.URL.Scheme), http.StatusBadRequest)
		return
	}
	host, port := splitHostPort(r.URL.Host, 80)
	if !s.record(host, port) {
		deny(w, host, port)
		return
	}
	s.rp.ServeHTTP(w, r)
}

// connect opens a tunnel to an allowed host:port.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	host, port := splitHostPort(r.Host, 443)
	if !s.record(host, port) {
		w.Header().Set("Connection", "close")
		deny(w, host, port)
		return
	}
	up, err := s.dialTarget(r.Context(), net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		s.upstreamFailed(w, r, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "runner: the proxy cannot open tunnels on this connection", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		up.Close()
		down.Close()
		return
	}
	s.mu.Lock()
	s.conns[down], s.conns[up] = struct{}{}, struct{}{}
	s.tunnels.Add(1)
	s.mu.Unlock()
	go s.relay(down, buf.Reader, up)
}

// relay copies both ways until both sides are done, then closes them.
func (s *Server) relay(down net.Conn, pending io.Reader, up net.Conn) {
	defer s.tunnels.Done()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, pending) // what the client sent after the CONNECT line, then the rest
		closeWrite(up)
		close(done)
	}()
	_, _ = io.Copy(down, up)
	closeWrite(down)
	<-done
	s.mu.Lock()
	delete(s.conns, down)
	delete(s.conns, up)
	s.mu.Unlock()
	down.Close()
	up.Close()
}

// closeWrite half-closes c when it can (TCP, unix), else closes it.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// dialUpstream resolves host (unless it is an address) and dials it,
// after checking the allow list again (the plain HTTP transport dials
// here too).
func (s *Server) dialUpstream(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, port := splitHostPort(hostport, 0)
	if !s.opts.Allow.Allows(host, port) {
		return nil, fmt.Errorf("%s is not in the allow list", hostport)
	}
	addrs, err := s.resolve(ctx, normalHost(host))
	if err != nil {
		return nil, err
	}
	if _, perr := netip.ParseAddr(normalHost(host)); perr != nil { // a name, not an address
		if addrs, err = s.publicAddrs(normalHost(host), port, addrs); err != nil {
			return nil, err
		}
	}
	d := net.Dialer{Timeout: dialTimeout}
	var errs []error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), strconv.Itoa(port)))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// internalAddrError is a host name that resolved only to addresses of
// the runner machine itself (loopback, unspecified) or of its link
// (link-local: 169.254.169.254 is the cloud metadata service): the allow
// list names hosts, and a name must not open what the list would have to
// name by address (DNS rebinding, a wildcard whose subdomains someone
// else controls). The client gets 403 naming the address.
type internalAddrError struct {
	host string
	addr netip.Addr
	port int
	kind string
}

func (e *internalAddrError) Error() string {
	hp := net.JoinHostPort(e.addr.String(), strconv.Itoa(e.port))
	return fmt.Sprintf("%s resolved to %s, %s address: a name in the allow list never reaches the runner machine's own or link-local services; "+
		"to allow it, add the address itself (%q) to sandbox.network.allow", e.host, e.addr, e.kind, hp)
}

// internalAddr names the kind of a, with its article, as internalAddrError refuses it ("" for
// any other address). IPv4-mapped IPv6 addresses count as their IPv4.
func internalAddr(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "a loopback"
	case a.IsUnspecified():
		return "an unspecified" // 0.0.0.0 and :: connect to the machine itself
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a link-local"
	}
	return ""
}

// publicAddrs drops the addresses of host (a name) that internalAddr
// refuses, unless the allow list names the address itself on port (or,
// for loopback, LoopbackNames is set). The error names the first one
// refused when none is left.
func (s *Server) publicAddrs(host string, port int, addrs []netip.Addr) ([]netip.Addr, error) {
	out := addrs[:0:0]
	var refused error
	for _, a := range addrs {
		kind := internalAddr(a)
		if kind == "" || kind == "a loopback" && s.opts.LoopbackNames || s.opts.Allow.Allows(a.Unmap().String(), port) {
			out = append(out, a)
			continue
		}
		if refused == nil {
			refused = &internalAddrError{host: host, addr: a.Unmap(), port: port, kind: kind}
		}
	}
	if len(out) == 0 {
		return nil, refused
	}
	return out, nil
}

// resolve is host's addresses (host itself when it is one).
func (s *Server) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	look := s.opts.Resolve
	if look == nil {
		look = func(ctx context.Context, h string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		}
	}
	addrs, err := look(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("%s: no address", host)
	}
	return addrs, err
}

// upstreamFailed answers 502 when an allowed upstream cannot be reached.
func (s *Server) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	hostport := r.Host
	if r.Method != http.MethodConnect {
		hostport = r.URL.Host
		if _, _, e := net.SplitHostPort(hostport); e != nil {
			hostport = net.JoinHostPort(strings.Trim(hostport, "[]"), "80")
		}
	}
	s.failed(hostport, err)
	if ie := (*internalAddrError)(nil); errors.As(err, &ie) {
		http.Error(w, "runner: the sandbox denied network access: "+ie.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, fmt.Sprintf("runner: the sandbox's proxy could not reach %s: %v", hostport, err), http.StatusBadGateway)
}

// deny answers 403 with what was refused and how to allow it.
func deny(w http.ResponseWriter, host string, port int) {
	hp := net.JoinHostPort(normalHost(host), strconv.Itoa(port))
	w.Header().Set("X-Runner-Denied", hp)
	hint := fmt.Sprintf("%q", hp)
	if slices.Contains(webPorts, port) {
		hint += fmt.Sprintf(" (or %q for ports 80 and 443)", normalHost(host))
	}
	http.Error(w, fmt.Sprintf("runner: the sandbox denied network access to %s: it is not in the task's allow list.\n"+
		"To allow it, add %s to sandbox.network.allow in the task spec.\n", hp, hint), http.StatusForbidden)
}

// splitHostPort splits "host:port" ("[v6]:port"); without a port, or
// with a bad one, the port is def.
func splitHostPort(hostport string, def int) (string, int) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return strings.Trim(hostport, "[]"), def
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return h, def
	}
	return h, n
}
