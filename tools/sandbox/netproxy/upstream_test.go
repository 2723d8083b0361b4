package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/http/httpproxy"
)

// companyProxy is an egress proxy on 127.0.0.1 that alone knows where
// the *.test names are: it records each request line and its
// Proxy-Authorization, then opens CONNECT tunnels and forwards
// absolute-form requests to target.
type companyProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCompanyProxy(t *testing.T, target string) *companyProxy {
	t.Helper()
	p := &companyProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, fmt.Sprintf("%s %s auth=%s", r.Method, r.Host, r.Header.Get("Proxy-Authorization")))
		p.mu.Unlock()
		up, err := (&net.Dialer{}).DialContext(r.Context(), "tcp", target)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		if r.Method != http.MethodConnect {
			r.RequestURI = ""
			_ = r.Write(up)
			resp, err := http.ReadResponse(bufio.NewReader(up), r)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
			return
		}
		down, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer down.Close()
		_, _ = io.WriteString(down, "HTTP/1.1 200 OK\r\n\r\n")
		go func() { _, _ = io.Copy(up, buf) }()
		_, _ = io.Copy(down, up)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *companyProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// TestProxyThroughCompanyProxy: with the runner's own HTTPS_PROXY and
// HTTP_PROXY set (credentials in the URL), an allowed name is reached
// through that proxy, by CONNECT and by plain HTTP, without resolving it
// here; a denied name never reaches it; a NO_PROXY name is dialled
// directly. The control, without Upstream, shows the names do not
// resolve here, so only the company proxy made them reachable.
func TestProxyThroughCompanyProxy(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "target %s %s", r.Host, r.URL.Path)
	}))
	defer target.Close()
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	company := newCompanyProxy(t, target.Listener.Addr().String())
	cu, _ := url.Parse(company.URL)
	cu.User = url.UserPassword("ci", "s3cret")
	cfg := httpproxy.Config{HTTPProxy: cu.String(), HTTPSProxy: cu.String(), NoProxy: "direct.test"}
	allow, err := ParseList([]string{"allowed.test:" + port, "direct.test:" + port})
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(_ context.Context, h string) ([]netip.Addr, error) {
		if h == "direct.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host %s here", h)
	}
	start := func(upstream func(*url.URL) (*url.URL, error)) string {
		sock := filepath.Join(t.TempDir(), "p.sock")
		srv, err := Listen(t.Context(), sock, Options{Allow: allow, Resolve: resolve, LoopbackNames: true, Upstream: upstream})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		return sock
	}
	connect := func(sock, hostport string) string {
		t.Helper()
		conn, err := (&net.Dialer{}).DialContext(t.Context(), "unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hostport, hostport, hostport)
		got, _ := io.ReadAll(conn)
		return string(got)
	}
	get := func(sock, u string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		resp, err := proxyClient(sock).Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	sock := start(func(u *url.URL) (*url.URL, error) { return cfg.ProxyFunc()(u) })
	if got := connect(sock, "allowed.test:"+port); !strings.HasPrefix(got, "HTTP/1.1 200") || !strings.Contains(got, "target allowed.test:"+port+" /tunnel") {
		t.Errorf("CONNECT through the company proxy: %q", got)
	}
	if code, body := get(sock, "http://allowed.test:"+port+"/plain"); code != 200 || body != "target allowed.test:"+port+" /plain" {
		t.Errorf("plain HTTP through the company proxy: %d %q", code, body)
	}
	if got := connect(sock, "evil.test:443"); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("denied CONNECT: %q", got)
	}
	if got := connect(sock, "direct.test:"+port); !strings.Contains(got, "target direct.test:"+port+" /tunnel") {
		t.Errorf("NO_PROXY name, directly: %q", got)
	}
	auth := "auth=Basic Y2k6czNjcmV0" // ci:s3cret
	want := []string{"CONNECT allowed.test:" + port + " " + auth, "GET allowed.test:" + port + " " + auth}
	if got := company.requests(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the company proxy saw\n %q\nwant\n %q", got, want)
	}

	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "who are you", http.StatusProxyAuthRequired)
	}))
	defer refusing.Close()
	ru, _ := url.Parse(refusing.URL)
	ru.User = url.UserPassword("ci", "s3cret")
	strict := start(func(*url.URL) (*url.URL, error) { return ru, nil })
	if got := connect(strict, "allowed.test:"+port); !strings.HasPrefix(got, "HTTP/1.1 502") || !strings.Contains(got, "407") ||
		strings.Contains(got, "s3cret") {
		t.Errorf("a company proxy that refuses: %q", got)
	}

	control := start(nil)
	if got := connect(control, "allowed.test:"+port); !strings.HasPrefix(got, "HTTP/1.1 502") || !strings.Contains(got, "no such host allowed.test here") {
		t.Errorf("control, without the company proxy: %q", got)
	}
}
