package sandbox_test

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

func TestNewModes(t *testing.T) {
	tree := t.TempDir()
	if _, err := sandbox.New(sandbox.Policy{WorkTree: tree, Mode: "strict"}); err == nil || !strings.Contains(err.Error(), `unknown mode "strict"`) {
		t.Errorf("bad mode: %v", err)
	}
	off, err := sandbox.New(sandbox.Policy{WorkTree: tree, Mode: sandbox.ModeOff})
	if err != nil {
		t.Fatal(err)
	}
	if got := off.Describe(); got != "off: commands run unsandboxed" {
		t.Errorf("off: %q", got)
	}
	cmd, err := off.Command(t.Context(), []string{"true"}, tree, nil)
	if err != nil || cmd.Run() != nil {
		t.Errorf("off runs plainly: %v", err)
	}
	sup := sandbox.Probe()
	auto, err := sandbox.New(sandbox.Policy{WorkTree: tree})
	if err != nil {
		t.Fatal(err)
	}
	defer auto.Close()
	if got, want := len(auto.Layers()), len(sup.Available()); got != want {
		t.Errorf("auto uses %v, available %v", auto.Layers(), sup.Available())
	}
	req, err := sandbox.New(sandbox.Policy{WorkTree: tree, Mode: sandbox.ModeRequired})
	if len(sup.Available()) == len(sandbox.AllLayers()) {
		if err != nil {
			t.Errorf("required with every layer available: %v", err)
		}
		req.Close()
	} else if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "mode: auto") {
		t.Errorf("required without every layer: %v", err)
	}
}

// TestNoLayerRefusesCommands builds the Support a machine without any
// layer has and checks the refusal says what is missing and how to opt out.
func TestNoLayerRefusesCommands(t *testing.T) {
	sup := sandbox.Support{Namespaces: errors.New("uid map: permission denied"), Landlock: errors.New("the kernel has no Landlock")}
	msg := sup.Missing()
	for _, want := range []string{"uid map: permission denied", "apparmor_restrict_unprivileged_userns", "no Landlock", "lsm="} {
		if !strings.Contains(msg, want) {
			t.Errorf("Missing() = %q, want it to mention %q", msg, want)
		}
	}
	if got := sandbox.Describe(sandbox.ModeAuto, nil); !strings.Contains(got, "refused") {
		t.Errorf("Describe with no layer: %q", got)
	}
}

// TestCapabilitiesDropped: a command that is uid 0 in the sandbox has no
// capability, so it cannot unmount the read-only binds.
func TestCapabilitiesDropped(t *testing.T) {
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			requireLayers(t, layers)
			tree := t.TempDir()
			if err := os.Mkdir(filepath.Join(tree, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			out, _, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; umount .git && echo unmounted"}, tree, []string{"PATH=" + os.Getenv("PATH")})
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.HasPrefix(line, "Cap") && !strings.HasSuffix(line, "0000000000000000") {
					t.Errorf("capability left: %s", line)
				}
			}
			if strings.Contains(string(out), "unmounted") {
				t.Errorf("the command unmounted .git:\n%s", out)
			}
		})
	}
}

// TestHiddenHomeKeepsWritableCache: the runner's $HOME is hidden, but a
// writable cache below it stays reachable and writable.
func TestHiddenHomeKeepsWritableCache(t *testing.T) {
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			requireLayers(t, layers)
			home := t.TempDir()
			for _, f := range []string{"secret/token", "cache/keep/x", "cache/other"} {
				p := filepath.Join(home, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("data-"+f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tree := t.TempDir()
			sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers, Hidden: []string{home}, Writable: []string{filepath.Join(home, "cache", "keep")}})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			script := `cat "$H/secret/token" "$H/cache/other" 2>/dev/null; cat "$H/cache/keep/x" && echo y > "$H/cache/keep/y" && echo wrote`
			out, _, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", script}, tree, []string{"PATH=" + os.Getenv("PATH"), "H=" + home})
			if strings.Contains(string(out), "data-secret") || strings.Contains(string(out), "data-cache/other") {
				t.Errorf("a hidden file was read:\n%s", out)
			}
			if !strings.Contains(string(out), "data-cache/keep/x") || !strings.Contains(string(out), "wrote") {
				t.Errorf("the writable cache below the hidden home is not usable:\n%s", out)
			}
		})
	}
}

// TestGitConfigGlobal: the guard file is the global git config, read-only.
func TestGitConfigGlobal(t *testing.T) {
	requireLayers(t, sandbox.Probe().Available()[:1])
	tree := t.TempDir()
	sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, GitConfig: "[safe]\n\tbareRepository = explicit\n"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	out, _, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", git + ` config --global safe.bareRepository; echo x >> "$GIT_CONFIG_GLOBAL" && echo changed`}, tree, []string{"PATH=" + os.Getenv("PATH")})
	if !strings.HasPrefix(string(out), "explicit\n") || strings.Contains(string(out), "changed") {
		t.Errorf("git guard: %s", out)
	}
}

// TestHiddenSocket: with namespaces a daemon's unix socket that exists
// when the sandbox is built is covered (named as HostSockets are, or found
// listening), so it cannot be connected to. One bound after the sandbox
// was built is reachable (README: what it cannot do); with Landlock only
// connect(2) is refused whatever the socket (TestDaemonSocketsUnreachable).
func TestHiddenSocket(t *testing.T) {
	for name, layers := range layerSets() {
		if !slices.Contains(layers, sandbox.LayerNamespaces) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			requireLayers(t, layers)
			for _, before := range []bool{true, false} {
				reached := dialFromSandbox(t, layers, before)
				if before && reached {
					t.Error("the sandboxed command reached the covered socket")
				}
				if !before && !reached {
					t.Error("a socket bound after the sandbox was built is not covered, yet the command did not reach it (the control failed)")
				}
			}
		})
	}
}

// dialFromSandbox listens on a unix socket (before the sandbox is built,
// and named hidden, or after) and reports whether a sandboxed command
// connected to it.
func dialFromSandbox(t *testing.T, layers []sandbox.Layer, before bool) bool {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "daemon.sock")
	tree := t.TempDir()
	pol := sandbox.Policy{WorkTree: tree, Layers: layers, Hidden: []string{sock}}
	var sb *sandbox.Sandbox
	var err error
	if !before {
		if sb, err = sandbox.New(pol); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			b, _ := io.ReadAll(c)
			got <- string(b)
		}
	}()
	if before {
		if sb, err = sandbox.New(pol); err != nil {
			t.Fatal(err)
		}
	}
	defer sb.Close()
	exe, _ := os.Executable()
	if _, code, _ := runIn(t, t.Context(), sb, []string{exe}, tree, []string{dialUnixEnv + "=" + sock}); code != 0 {
		return false // the dial failed: nothing is on its way to the listener
	}
	// The dial succeeded, so the connection and its bytes are queued on
	// some socket at that path: wait for this listener's goroutine to take
	// them (it can be slow to be scheduled on a loaded machine; a fixed
	// short wait let the control fail), and only give up, unreached, when
	// the command connected to something else.
	select {
	case <-got:
		return true
	case <-time.After(30 * time.Second):
		return false
	}
}
