package sandbox_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/sandbox"
	"github.com/seed43ef5acb/runner/tools/sandbox/netproxy"
)

// upstreams are an HTTP and an HTTPS server on 127.0.0.1, and a plain TCP
// listener that records whether anything connected to it directly.
type upstreams struct {
	http, https *httptest.Server
	raw         *listeners
}

func startUpstreams(t *testing.T) *upstreams {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from upstream %s", r.URL.Path) })
	u := &upstreams{http: httptest.NewServer(h), https: httptest.NewTLSServer(h), raw: listen(t)}
	t.Cleanup(func() { u.http.Close(); u.https.Close(); u.raw.close() })
	return u
}

func hostPort(s *httptest.Server) string { return s.Listener.Addr().String() }

// startProxy starts the allow list's proxy on a unix socket in a
// directory of its own (as the pipeline does) allowing the two servers.
func startProxy(t *testing.T, u *upstreams) *netproxy.Server {
	t.Helper()
	allow, err := netproxy.ParseList([]string{hostPort(u.http), hostPort(u.https)})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "np-") // short: a socket path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := netproxy.Listen(t.Context(), filepath.Join(dir, "proxy.sock"), netproxy.Options{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// proxyScript is what the command under test runs with real bash and
// curl: allowed plain HTTP and HTTPS (CONNECT) through the proxy, a
// denied host each way, then the raw listener and the allowed server
// directly, without the proxy (bash's /dev/tcp and curl --noproxy), and
// a datagram to the raw UDP listener.
func proxyScript(u *upstreams) string {
	return fmt.Sprintf(`
echo "proxy=$HTTP_PROXY"
echo "allowed-http: $(curl -sS -m 10 %s/a 2>&1)"
echo "allowed-https: $(curl -sS -k -m 10 %s/b 2>&1)"
echo "denied-http: $(curl -sS -m 10 -w ' code=%%{http_code}' http://denied.example/x 2>&1)"
echo "denied-https: $(curl -sS -m 10 https://denied.example/ 2>&1; echo " exit=$?")"
if (exec 3<>/dev/tcp/127.0.0.1/%d && echo leaked >&3) 2>/dev/null; then echo "direct-raw: connected"; else echo "direct-raw: refused"; fi
echo "direct-allowed: $(curl -sS -m 5 --noproxy '*' %s/c 2>&1; echo " exit=$?")"
(echo leaked-udp >/dev/udp/127.0.0.1/%d) 2>/dev/null; echo "udp: $?"
`, u.http.URL, u.https.URL, u.raw.tcp.Addr().(*net.TCPAddr).Port, u.http.URL, u.raw.udp.LocalAddr().(*net.UDPAddr).Port)
}

// TestProxyAllowList: under each layer, through the zygote and through a
// helper of its own, a command reaches the allowed servers through the
// proxy (HTTP and CONNECT), a denied host gets 403 naming it and how to
// allow it (and the proxy counts it), and direct TCP to 127.0.0.1
// without the proxy still fails, to the allowed server's port too.
func TestProxyAllowList(t *testing.T) {
	requireTool(t, "curl")
	requireTool(t, "bash")
	for name, layers := range layerSets() {
		for launch, perCommand := range launchSets() {
			t.Run(name+"/"+launch, func(t *testing.T) {
				requireLayers(t, layers)
				u := startUpstreams(t)
				srv := startProxy(t, u)
				tree := t.TempDir()
				sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers, PerCommandHelper: perCommand, Proxy: srv.Addr()})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				out, code, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", proxyScript(u)}, tree, []string{"PATH=" + os.Getenv("PATH")})
				t.Logf("exit %d:\n%s", code, out)
				for _, want := range []string{
					"allowed-http: hello from upstream /a",
					"allowed-https: hello from upstream /b",
					"denied-http: runner: the sandbox denied network access to denied.example:80",
					`add "denied.example:80" (or "denied.example" for ports 80 and 443) to sandbox.network.allow`,
					"code=403",
					"direct-raw: refused",
				} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q", want)
					}
				}
				if !strings.Contains(out, "denied-https:") || !strings.Contains(out, "403") || strings.Contains(out, "denied-https:  exit=0") {
					t.Errorf("denied CONNECT not refused with 403")
				}
				if strings.Contains(out, "direct-allowed: hello") || strings.Contains(out, "direct-allowed:  exit=0") {
					t.Errorf("the allowed server was reached directly, without the proxy")
				}
				if !slices.Contains(layers, sandbox.LayerNamespaces) && !strings.Contains(out, "udp: 1") {
					t.Errorf("the UDP socket was not refused (Landlock only: the seccomp filter allows TCP alone)")
				}
				if got := u.raw.received(); len(got) > 0 {
					t.Errorf("the raw listener got %q", got)
				}
				acc := fmt.Sprint(srv.Accesses())
				for _, want := range []string{"{denied.example 80 false 1 0 }", "{denied.example 443 false 1 0 }"} {
					if !strings.Contains(acc, want) {
						t.Errorf("accesses %s lack %s", acc, want)
					}
				}
			})
		}
	}
}

// TestProxyOffControl: with mode off the variables are set and the proxy
// is used by those who honour them, but nothing stops a direct
// connection (the control: the direct lines of the script succeed).
func TestProxyOffControl(t *testing.T) {
	requireTool(t, "curl")
	requireTool(t, "bash")
	u := startUpstreams(t)
	srv := startProxy(t, u)
	tree := t.TempDir()
	sb, err := sandbox.New(sandbox.Policy{Mode: sandbox.ModeOff, WorkTree: tree, Proxy: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	out, _, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", proxyScript(u)}, tree, []string{"PATH=" + os.Getenv("PATH")})
	for _, want := range []string{"allowed-http: hello from upstream /a", "code=403", "direct-raw: connected", "direct-allowed: hello from upstream /c"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
