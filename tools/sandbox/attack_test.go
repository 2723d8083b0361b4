package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// layerSets are the layer combinations every attack runs under: each
// layer on its own, and both.
func layerSets() map[string][]sandbox.Layer {
	return map[string][]sandbox.Layer{
		"namespaces": {sandbox.LayerNamespaces},
		"landlock":   {sandbox.LayerLandlock},
		"both":       {sandbox.LayerNamespaces, sandbox.LayerLandlock},
	}
}

// requireLayers skips the test, with the reason, when a layer is missing.
func requireLayers(t *testing.T, layers []sandbox.Layer) {
	t.Helper()
	sup := sandbox.Probe()
	for _, l := range layers {
		if !slices.Contains(sup.Available(), l) {
			t.Skipf("layer %s is not available on this machine: %s", l, sup.Missing())
		}
	}
}

// requireTool skips the test when a program the attack uses is missing.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed (%v): .ci/run installs it", name, err)
	}
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// listeners are a TCP listener, a UDP listener and a fake DNS server on
// 127.0.0.1, recording every payload that reaches them.
type listeners struct {
	tcp       net.Listener
	udp, dns  *net.UDPConn
	mu        sync.Mutex
	got       []string
	closeOnce sync.Once
}

func listen(t *testing.T) *listeners {
	t.Helper()
	l := &listeners{}
	var err error
	if l.tcp, err = (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []**net.UDPConn{&l.udp, &l.dns} {
		if *c, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	record := func(what string, b []byte) {
		l.mu.Lock()
		l.got = append(l.got, what+": "+string(b))
		l.mu.Unlock()
	}
	go func() {
		for {
			c, err := l.tcp.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(io.LimitReader(c, 4096))
			c.Close()
			record("tcp", b)
		}
	}()
	for name, c := range map[string]*net.UDPConn{"udp": l.udp, "dns": l.dns} {
		go func() {
			buf := make([]byte, 4096)
			for {
				n, _, err := c.ReadFromUDP(buf)
				if err != nil {
					return
				}
				record(name, buf[:n])
			}
		}()
	}
	t.Cleanup(l.close)
	return l
}

func (l *listeners) close() {
	l.closeOnce.Do(func() { l.tcp.Close(); l.udp.Close(); l.dns.Close() })
}

// received is what reached the listeners, after a short grace for
// datagrams in flight.
func (l *listeners) received() []string {
	time.Sleep(100 * time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// receivedAtLeast waits until n things reached the listeners (or 30 s
// passed) and returns them: for a control, where the attack's sends
// succeeded and only this test's goroutines are left to take them, which
// a loaded machine can delay past received's short grace.
func (l *listeners) receivedAtLeast(n int) []string {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		l.mu.Lock()
		got := slices.Clone(l.got)
		l.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
	}
}

// victim is a work tree with a malicious build step, a protected .env and
// a real git repository, and the secrets the attack hunts.
type victim struct {
	tree      string
	outside   []string // files the attack tries to create outside the tree
	existing  string   // a file outside the tree the attack tries to change through a hard link
	dotenv    string   // the secret in .env
	runner    string   // a secret in the fake runner's environment
	ancestor  string   // a secret in its parent's environment
	mark      string   // what the attack sends over the network
	gitConfig []byte
}

func newVictim(t *testing.T, kind string) *victim {
	t.Helper()
	id := randomHex(t)
	v := &victim{
		tree:   filepath.Join(t.TempDir(), "repo"),
		dotenv: "sk-dotenv" + id, runner: "ghp_runner" + id, ancestor: "ghp_ancestor" + id, mark: "mark" + id,
	}
	if err := os.CopyFS(v.tree, os.DirFS(filepath.Join("testdata", "attack", kind))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.tree, ".env"), []byte("OPENAI_API_KEY="+v.dotenv+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, v.tree, "init", "-q")
	gittest.Run(t, v.tree, "add", "-A")
	gittest.Run(t, v.tree, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
	var err error
	if v.gitConfig, err = os.ReadFile(filepath.Join(v.tree, ".git", "config")); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	v.outside = []string{
		filepath.Join(home, "pwned-"+id),
		filepath.Join(os.TempDir(), "pwned-"+id),
		filepath.Join(filepath.Dir(v.tree), "outside-"+id),
	}
	v.existing = filepath.Join(filepath.Dir(v.tree), "existing-"+id)
	if err := os.WriteFile(v.existing, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range v.outside {
			_ = os.Remove(f)
		}
	})
	return v
}

// policy is the default policy for v: the tree, Go's build cache
// writable, .env and the runner's $HOME hidden.
func (v *victim) policy(layers []sandbox.Layer, mode sandbox.Mode) sandbox.Policy {
	home, _ := os.UserHomeDir()
	return sandbox.Policy{
		Mode: mode, Layers: layers, WorkTree: v.tree, Writable: []string{goCache()},
		Hidden: []string{filepath.Join(v.tree, ".env"), home},
	}
}

func goCache() string {
	out, err := exec.CommandContext(context.Background(), "go", "env", "GOCACHE").Output()
	if err != nil {
		return filepath.Join(os.TempDir(), "gocache")
	}
	return strings.TrimSpace(string(out))
}

// run runs argv in the sandbox the way the runner would, from a fake
// runner process (this test binary) whose parent is a bash; both have
// secrets in their environment.
func (v *victim) run(t *testing.T, pol sandbox.Policy, l *listeners, argv ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	launch := sandbox.LaunchZygote // every attack goes through the zygote, the default path (mode off: a reaper-only zygote)
	conf, err := json.Marshal(fakeRunner{Policy: pol, Argv: argv, Dir: v.tree, Launch: launch, Env: []string{
		"PATH=" + os.Getenv("PATH"), "GOCACHE=" + goCache(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off",
		"ATTACK_OUTSIDE=" + strings.Join(v.outside, " "), "ATTACK_EXISTING=" + v.existing, "ATTACK_MARK=" + v.mark,
		"ATTACK_TCP=" + l.tcp.Addr().String(), "ATTACK_UDP=" + l.udp.LocalAddr().String(), "ATTACK_DNS=" + l.dns.LocalAddr().String(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "bash", "-c", `"$0"; exit $?`, exe)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), fakeRunnerEnv + "=" + string(conf),
		"GITHUB_TOKEN=" + v.runner, "ANCESTOR_TOKEN=" + v.ancestor}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out.String())
	}
	return out.String()
}

// assertContained checks from outside that the attack got nothing: no file
// outside the tree, nothing on the listeners, no secret in the loot, and
// with namespaces .git unchanged. Landlock alone cannot keep .git (inside
// the writable tree) read-only: the runner's tripwire catches that.
func (v *victim) assertContained(t *testing.T, layers []sandbox.Layer, l *listeners, out string) {
	t.Helper()
	for _, f := range v.outside {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the attack wrote %s outside the work tree (stat: %v)", f, err)
		}
	}
	if b, _ := os.ReadFile(v.existing); string(b) != "original\n" {
		t.Errorf("the attack changed %s outside the work tree (a hard link): %q", v.existing, b)
	}
	if got := l.received(); len(got) > 0 {
		t.Errorf("the attack reached 127.0.0.1 listeners: %q", got)
	}
	loot := readAll(t, filepath.Join(v.tree, "loot"))
	for name, secret := range map[string]string{"the runner's environment": v.runner, "its parent's environment": v.ancestor, ".env": v.dotenv} {
		if strings.Contains(loot, secret) {
			t.Errorf("the attack read %s: the secret is in loot/", name)
		}
	}
	if slices.Contains(layers, sandbox.LayerNamespaces) {
		if b, _ := os.ReadFile(filepath.Join(v.tree, ".git", "config")); !bytes.Equal(b, v.gitConfig) {
			t.Errorf(".git/config changed:\n%s", b)
		}
		if _, err := os.Stat(filepath.Join(v.tree, ".git", "hooks", "pre-commit")); err == nil {
			t.Error("the attack added .git/hooks/pre-commit")
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("attack output:\n%s", out)
	}
}

// readAll concatenates the files of dir.
func readAll(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.Write(data)
	}
	return b.String()
}

// The attacks: a malicious `go test`, `make test` and `npm test` (real
// processes) under each layer on its own and under both.
func TestAttacks(t *testing.T) {
	kinds := []struct {
		kind, tool string
		argv       []string
	}{
		{"gotest", "go", []string{"go", "test", "-count=1", "-v", "./..."}},
		{"make", "make", []string{"make", "test"}},
		{"npm", "npm", []string{"npm", "test"}},
	}
	for name, layers := range layerSets() {
		for _, k := range kinds {
			t.Run(name+"/"+k.kind, func(t *testing.T) {
				requireLayers(t, layers)
				requireTool(t, k.tool)
				v := newVictim(t, k.kind)
				l := listen(t)
				out := v.run(t, v.policy(layers, sandbox.ModeAuto), l, k.argv...)
				v.assertContained(t, layers, l, out)
				if k.kind == "gotest" && !strings.Contains(out, "--- PASS: TestAdd") {
					t.Errorf("the honest test did not pass in the sandbox:\n%s", out)
				}
			})
		}
	}
}

// TestAttackHarnessCatchesUnsandboxed runs the make attack with mode off
// and checks that the harness sees it: the assertions above can fail.
func TestAttackHarnessCatchesUnsandboxed(t *testing.T) {
	requireTool(t, "make")
	v := newVictim(t, "make")
	l := listen(t)
	out := v.run(t, v.policy(nil, sandbox.ModeOff), l, "make", "test")
	for _, f := range v.outside {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("unsandboxed, the attack should have written %s: %v", f, err)
		}
	}
	if got := l.receivedAtLeast(2); len(got) < 2 {
		t.Errorf("unsandboxed, the attack should have reached the listeners, got %q", got)
	}
	if b, _ := os.ReadFile(v.existing); !strings.Contains(string(b), "pwned") {
		t.Errorf("unsandboxed, the attack should have changed %s through a hard link: %q", v.existing, b)
	}
	if loot := readAll(t, filepath.Join(v.tree, "loot")); !strings.Contains(loot, v.dotenv) || !strings.Contains(loot, v.ancestor) {
		t.Errorf("unsandboxed, the attack should have read .env and its parent's environment")
	}
	if b, _ := os.ReadFile(filepath.Join(v.tree, ".git", "config")); bytes.Equal(b, v.gitConfig) {
		t.Error("unsandboxed, the attack should have changed .git/config")
	}
	if t.Failed() {
		t.Logf("attack output:\n%s", out)
	}
}
