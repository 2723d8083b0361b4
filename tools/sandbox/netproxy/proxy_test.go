package netproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseEntry(t *testing.T) {
	tests := []struct{ in, host, err string }{
		{"proxy.golang.org", "proxy.golang.org", ""},
		{"Proxy.Golang.org.:8443", "proxy.golang.org", ""},
		{"*.npmjs.org", ".npmjs.org", ""},
		{"127.0.0.1:9", "127.0.0.1", ""},
		{"[::1]:8080", "::1", ""},
		{"[::1]", "::1", ""},
		{"::1", "", "in brackets"},
		{"host:0", "", "not a number from 1 to 65535"},
		{"host:http", "", "not a number"},
		{"*.com", "", "at least two labels"},
		{"*", "", "not a host name"},
		{"http://example.com", "", `is a URL, not a host: write "example.com"`},
		{"https://user@registry.example:8443/npm/", "", `write "registry.example:8443"`},
		{"example.com/path", "", "not a host name"},
		{"exa mple.com", "", "not a host name"},
	}
	for _, tt := range tests {
		e, err := ParseEntry(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseEntry(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || e.Host != tt.host {
			t.Errorf("ParseEntry(%q) = %+v, %v; want host %q", tt.in, e, err, tt.host)
		}
	}
}

func TestAllows(t *testing.T) {
	l, err := ParseList([]string{"example.com", "*.npmjs.org", "10.0.0.5:8080", "[::1]:9"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		port int
		want bool
	}{
		{"example.com", 443, true}, {"EXAMPLE.com.", 80, true}, {"example.com", 8443, false},
		{"sub.example.com", 443, false}, {"registry.npmjs.org", 443, true}, {"npmjs.org", 443, false},
		{"evilnpmjs.org", 443, false}, {"10.0.0.5", 8080, true}, {"10.0.0.5", 80, false},
		{"::1", 9, true}, {"[::1]", 9, true}, {"::ffff:10.0.0.5", 8080, true},
	}
	for _, tt := range tests {
		if got := l.Allows(tt.host, tt.port); got != tt.want {
			t.Errorf("Allows(%q, %d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
	if l.AllowsLoopback() != true {
		t.Error("[::1]:9 is loopback")
	}
	if l2, _ := ParseList([]string{"example.com"}); l2.AllowsLoopback() {
		t.Error("example.com is not loopback")
	}
}

// proxyClient is an HTTP client whose proxy is the server on sock.
func proxyClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.invalid"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

// TestProxy: a real upstream on 127.0.0.1, reached through the proxy on a
// unix socket by plain HTTP (by address and by a name the test resolves),
// and through CONNECT; a port and a name not in the list get 403 with
// how to allow them; every host:port is counted once with its requests.
func TestProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream %s %s", r.Host, r.URL.Path)
	}))
	defer up.Close()
	_, portStr, _ := net.SplitHostPort(up.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	allow, err := ParseList([]string{"127.0.0.1:" + portStr, "registry.test:" + portStr})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "p.sock")
	var first []Access
	srv, err := Listen(t.Context(), sock, Options{Allow: allow, OnFirst: func(a Access) { first = append(first, a) },
		Resolve: func(_ context.Context, h string) ([]netip.Addr, error) {
			if h == "registry.test" {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return nil, fmt.Errorf("no such host %s", h)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := proxyClient(sock)
	get := func(u string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for range 2 {
		if code, body := get(up.URL + "/a"); code != 200 || body != "upstream "+up.Listener.Addr().String()+" /a" {
			t.Errorf("allowed address: %d %q", code, body)
		}
	}
	if code, body := get("http://registry.test:" + portStr + "/b"); code != 200 || !strings.Contains(body, "/b") {
		t.Errorf("allowed name: %d %q", code, body)
	}
	code, body := get("http://denied.test/x")
	if code != 403 || !strings.Contains(body, "denied.test:80") || !strings.Contains(body, "sandbox.network.allow") || !strings.Contains(body, `"denied.test"`) {
		t.Errorf("denied name: %d %q", code, body)
	}
	if code, _ := get(fmt.Sprintf("http://127.0.0.1:%d/", port+1)); code != 403 {
		t.Errorf("other port of an allowed address: %d", code)
	}
	// CONNECT through the proxy to the allowed port, then HTTP inside the tunnel
	conn, err := (&net.Dialer{}).DialContext(t.Context(), "unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\nGET /t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port, port)
	got, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.HasPrefix(string(got), "HTTP/1.1 200 Connection Established") || !strings.Contains(string(got), "upstream x /t") {
		t.Errorf("CONNECT tunnel: %q", got)
	}
	conn, _ = (&net.Dialer{}).DialContext(t.Context(), "unix", sock)
	fmt.Fprintf(conn, "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
	got, _ = io.ReadAll(conn)
	conn.Close()
	if !strings.HasPrefix(string(got), "HTTP/1.1 403") || !strings.Contains(string(got), "evil.test:443") {
		t.Errorf("denied CONNECT: %q", got)
	}
	want := []Access{
		{Host: "127.0.0.1", Port: port, Allowed: true, Requests: 3},
		{Host: "registry.test", Port: port, Allowed: true, Requests: 1},
		{Host: "denied.test", Port: 80, Requests: 1},
		{Host: "127.0.0.1", Port: port + 1, Requests: 1},
		{Host: "evil.test", Port: 443, Requests: 1},
	}
	if got := srv.Accesses(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("accesses:\n got %+v\nwant %+v", got, want)
	}
	if len(first) != len(want) {
		t.Errorf("OnFirst called %d times, want once per host:port (%d)", len(first), len(want))
	}
}

// TestProxyUpstreamDown: an allowed host that refuses connections gets
// 502 and is counted as failed.
func TestProxyUpstreamDown(t *testing.T) {
	ln, _ := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	allow, _ := ParseList([]string{addr})
	sock := filepath.Join(t.TempDir(), "p.sock")
	srv, err := Listen(t.Context(), sock, Options{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/", nil)
	resp, err := proxyClient(sock).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	if a := srv.Accesses(); len(a) != 1 || !a[0].Allowed || a[0].Failed != 1 || a[0].Error == "" {
		t.Errorf("accesses %+v", a)
	}
}

// TestProxyRefusesInternalAddresses: an allowed host NAME that resolves to
// the runner machine's loopback (DNS rebinding; a wildcard whose
// subdomains someone else controls), in IPv4-mapped form, to 0.0.0.0
// (which connects to the machine itself) or to a link-local address (the
// cloud metadata service) is refused with 403 naming the address, by
// plain HTTP and by CONNECT, and a listener on 127.0.0.1 gets nothing
// (the proxy dialled whatever the name resolved to). With
// LoopbackNames the loopback names reach it; 0.0.0.0 and link-local stay
// refused.
func TestProxyRefusesInternalAddresses(t *testing.T) {
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "loopback-service-secret")
	}))
	defer up.Close()
	_, portStr, _ := net.SplitHostPort(up.Listener.Addr().String())
	names := map[string]string{"rebind.test": "127.0.0.1", "mapped.test": "::ffff:127.0.0.1", "zero.test": "0.0.0.0", "meta.test": "169.254.169.254"}
	var entries []string
	for n := range names {
		entries = append(entries, n+":"+portStr)
	}
	allow, err := ParseList(entries)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(_ context.Context, h string) ([]netip.Addr, error) {
		if a, ok := names[h]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, fmt.Errorf("no such host %s", h)
	}
	for _, loopbackNames := range []bool{false, true} {
		t.Run(fmt.Sprintf("loopback-names=%v", loopbackNames), func(t *testing.T) {
			hits.Store(0)
			sock := filepath.Join(t.TempDir(), "p.sock")
			srv, err := Listen(t.Context(), sock, Options{Allow: allow, Resolve: resolve, LoopbackNames: loopbackNames})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			for name, addr := range names {
				refused := !loopbackNames || name == "meta.test" || name == "zero.test"
				want := fmt.Sprintf("resolved to %s", netip.MustParseAddr(addr).Unmap())
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+name+":"+portStr+"/", nil)
				resp, err := proxyClient(sock).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if refused && (resp.StatusCode != 403 || !strings.Contains(string(body), want) || !strings.Contains(string(body), "add the address itself")) {
					t.Errorf("GET via %s (%s): %d %q, want 403 naming the address", name, addr, resp.StatusCode, body)
				}
				if !refused && (resp.StatusCode != 200 || string(body) != "loopback-service-secret") {
					t.Errorf("GET via %s (%s) with LoopbackNames: %d %q, want the upstream's answer", name, addr, resp.StatusCode, body)
				}
				conn, err := (&net.Dialer{}).DialContext(t.Context(), "unix", sock)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(conn, "CONNECT %[1]s:%[2]s HTTP/1.1\r\nHost: %[1]s:%[2]s\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", name, portStr)
				got, _ := io.ReadAll(conn)
				conn.Close()
				if refused && (!strings.HasPrefix(string(got), "HTTP/1.1 403") || !strings.Contains(string(got), want)) {
					t.Errorf("CONNECT %s (%s): %q, want 403 naming the address", name, addr, got)
				}
			}
			wantHits := int32(0)
			if loopbackNames {
				wantHits = 4 // rebind and mapped, by GET and by CONNECT
			}
			if got := hits.Load(); got != wantHits {
				t.Errorf("the listener on 127.0.0.1 got %d requests, want %d", got, wantHits)
			}
			for _, a := range srv.Accesses() {
				if refused := !loopbackNames || a.Host == "meta.test" || a.Host == "zero.test"; refused && (a.Failed != 2 || !strings.Contains(a.Error, "resolved to")) {
					t.Errorf("access %+v: want 2 failed with the address named", a)
				}
			}
		})
	}
}
