package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/net/http/httpproxy"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
	"github.com/seed43ef5acb/runner/tools/sandbox/netproxy"
)

// netProxySocket is the allow list proxy's socket below the run's
// temporary directory (a directory of its own: with Landlock ABI ≥ 9 the
// forwarder is granted connect on it alone).
const netProxySocket = "netproxy/proxy.sock"

// startNetProxy starts the proxy of sandbox.network.allow (none without
// an allow list) on a unix socket in the run's temporary directory,
// before the sandbox is built (its socket is then never covered), and
// points pol at it: HTTP_PROXY and friends for the commands, NO_PROXY
// for the sandbox's own loopback unless the list names loopback.
func (r *execRun) startNetProxy(ctx context.Context, pol *sandbox.Policy) error {
	allow := r.spec.Sandbox.Allow
	if len(allow) == 0 {
		return nil
	}
	list, err := netproxy.ParseList(allow)
	if err != nil { // the spec's decoder checked every entry
		return fmt.Errorf("%w: sandbox.network.allow: %w", ErrUsage, err)
	}
	sock := filepath.Join(r.runTemp.Path(), netProxySocket)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		return fmt.Errorf("%w: the network proxy: %w", ErrInfra, err)
	}
	srv, err := netproxy.Listen(ctx, sock, netproxy.Options{Allow: list, Resolve: r.opts.resolveHost, LoopbackNames: r.opts.loopbackNames,
		Upstream: r.upstreamProxy()})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInfra, err)
	}
	r.netProxy = srv
	pol.Proxy = sock
	if !list.AllowsLoopback() {
		pol.NoProxy = []string{"localhost", "127.0.0.1", "::1"}
	}
	if pol.Mode == sandbox.ModeOff {
		fmt.Fprintln(r.opts.Stderr, "runner: WARNING: sandbox.mode is off: sandbox.network.allow only sets HTTP_PROXY and HTTPS_PROXY; nothing stops a direct connection")
	}
	return nil
}

// upstreamProxy is how the runner's own environment reaches a URL: the
// proxy that HTTPS_PROXY or HTTP_PROXY names (upper case first, as Go and
// curl read them), or none for NO_PROXY's hosts and loopback. The allow
// list proxy goes out through it, so allowed hosts work behind a
// company's egress proxy. Nil when neither variable is set.
func (r *execRun) upstreamProxy() func(*url.URL) (*url.URL, error) {
	either := func(k string) string { return cmp.Or(r.getenv(k), r.getenv(strings.ToLower(k))) }
	cfg := httpproxy.Config{HTTPProxy: either("HTTP_PROXY"), HTTPSProxy: either("HTTPS_PROXY"), NoProxy: either("NO_PROXY")}
	if cfg.HTTPProxy == "" && cfg.HTTPSProxy == "" {
		return nil
	}
	return cfg.ProxyFunc()
}

// emitNetwork writes one network.access event per host:port the proxy
// decided on, in the order they were first asked for, and returns them
// for run.finished (nil without an allow list). The last command is done
// by then: the checks ran and the MCP servers stopped.
func (r *execRun) emitNetwork() []event.NetworkAccess {
	if r.netProxy == nil {
		return nil
	}
	out := []event.NetworkAccess{}
	for _, a := range r.netProxy.Accesses() {
		ev := event.NetworkAccess{Host: a.Host, Port: a.Port, Allowed: a.Allowed, Requests: a.Requests, Failed: a.Failed, Error: a.Error}
		_ = r.emit(ev)
		out = append(out, ev)
	}
	return out
}

// stopNetProxy stops the proxy (after the sandbox: no command is left).
func (r *execRun) stopNetProxy() {
	if r.netProxy != nil {
		_ = r.netProxy.Close()
		r.netProxy = nil
	}
}
