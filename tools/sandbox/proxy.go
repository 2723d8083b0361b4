package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ProxyPort is the port on 127.0.0.1 where, inside the sandbox's empty
// network namespace, the forwarder to the allow list's proxy listens
// (each zygote and helper has a namespace, and a forwarder, of its own).
const ProxyPort = 3128

// proxyConf is the helper's and zygote's part of the allow list's proxy.
type proxyConf struct {
	// Socket is the proxy's unix socket (outside the sandbox; bound
	// before the sandbox was built, never covered).
	Socket string `json:"socket"`
	// Port is where commands reach the proxy on 127.0.0.1: with
	// namespaces ProxyPort, served by the forwarder in the namespace
	// (Forward); with Landlock only the runner's own forwarder, the one
	// TCP port Landlock lets commands connect to.
	Port    int  `json:"port"`
	Forward bool `json:"forward,omitempty"`
}

// prepareProxy sets up how commands reach the proxy on p.Proxy: the
// forwarder in the namespace, or (Landlock only, mode off) one in the
// runner on an ephemeral port of 127.0.0.1, and the commands' proxy
// variables. Landlock only needs ABI ≥ 4 (TCP rules): below it nothing
// would keep commands to the proxy, and New fails.
func (s *Sandbox) prepareProxy(p Policy) error {
	if p.Proxy == "" {
		return nil
	}
	if p.Network {
		return errors.New("sandbox: a proxy (the network allow list) and an open network exclude each other")
	}
	conf := &proxyConf{Socket: filepath.Clean(p.Proxy), Port: ProxyPort, Forward: true}
	if !slices.Contains(s.layers, LayerNamespaces) {
		if abi := Probe().LandlockABI; s.mode != ModeOff && abi < 4 {
			return fmt.Errorf("%w: the network allow list under Landlock only needs Landlock ABI ≥ 4 (TCP rules) to keep commands to the proxy, "+
				"and this kernel has ABI %d: enable user namespaces, or use network: deny (or allow)", ErrUnavailable, abi)
		}
		ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("sandbox: the proxy's forwarder: %w", err)
		}
		s.proxyLn = ln
		go forward(ln, conf.Socket)
		conf.Port, conf.Forward = ln.Addr().(*net.TCPAddr).Port, false
	}
	s.cfg.Proxy = conf
	u := "http://127.0.0.1:" + strconv.Itoa(conf.Port)
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		s.proxyEnv = append(s.proxyEnv, name+"="+u, strings.ToLower(name)+"="+u)
	}
	if len(p.NoProxy) > 0 {
		np := strings.Join(p.NoProxy, ",")
		s.proxyEnv = append(s.proxyEnv, "NO_PROXY="+np, "no_proxy="+np)
	}
	return nil
}

// ProxyEnv are the variables that point commands at the allow list's
// proxy ("NAME=value"; nil without one).
func (s *Sandbox) ProxyEnv() []string { return slices.Clone(s.proxyEnv) }

// forward accepts connections on ln until it is closed and relays each
// to the unix socket at socket.
func forward(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		go relay(c, socket)
	}
}

// relay copies between c and a new connection to socket, both ways,
// until both are done.
func relay(c net.Conn, socket string) {
	defer c.Close()
	u, err := (&net.Dialer{}).DialContext(context.Background(), "unix", socket)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(u, c)
		_ = u.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(c, u)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	<-done
}

// withoutPath is paths without p.
func withoutPath(paths []string, p string) []string {
	if p == "" {
		return paths
	}
	return slices.DeleteFunc(slices.Clone(paths), func(q string) bool { return filepath.Clean(q) == filepath.Clean(p) })
}
