package sandbox_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// Attacks on what commands of one run share: the zygote. Each runs under
// every layer set, through the zygote.

// zygoteSandbox is a sandbox over a fresh tree for layers (nil: mode off).
func zygoteSandbox(t *testing.T, layers []sandbox.Layer) (*sandbox.Sandbox, string) {
	t.Helper()
	requireLayers(t, layers)
	tree := t.TempDir()
	mode := sandbox.ModeAuto
	if layers == nil {
		mode = sandbox.ModeOff
	}
	sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, tree
}

func pathEnv(more ...string) []string { return append([]string{"PATH=" + os.Getenv("PATH")}, more...) }

// TestZygoteLeftoverCannotTamper: a command leaves background processes
// (one in a new session, one double-forked) that wait to overwrite a file
// the next command writes and reads back. They are killed when their
// command exits: the next command reads what it wrote.
func TestZygoteLeftoverCannotTamper(t *testing.T) {
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			sb, tree := zygoteSandbox(t, layers)
			id := markID()
			evil := `for i in $(seq 300); do echo tampered > victim; sleep 0.01; done`
			script := "setsid bash -c '" + evil + "; sleep 303." + id + "' & (bash -c '" + evil + "' &) ; sleep 304." + id + " & echo left"
			if out, code, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", script}, tree, pathEnv()); code != 0 || out != "left\n" {
				t.Fatalf("the first command: %q exit %d", out, code)
			}
			if left := marked(id); len(left) > 0 {
				t.Errorf("processes the first command left run on after it: %v", left)
			}
			out, code, launch := runIn(t, t.Context(), sb, []string{"bash", "-c", "echo clean > victim; sleep 0.5; cat victim"}, tree, pathEnv())
			if out != "clean\n" || code != 0 || launch != sandbox.LaunchZygote {
				t.Errorf("the next command read %q (exit %d via %s): a leftover tampered with it", out, code, launch)
			}
		})
	}
}

// TestZygoteCommandsCannotSeeEachOther: while one command runs with a
// secret in its environment, a second one started at the same time (it
// gets another zygote) looks for it in every /proc/<pid>/environ and
// cmdline it can read, and for the first's marked sleep; it also tries
// the zygote's own environment and descriptors (its parent's).
func TestZygoteCommandsCannotSeeEachOther(t *testing.T) {
	sets := layerSets()
	sets["off"] = nil // the control: unsandboxed, the hunt finds the secret
	for name, layers := range sets {
		t.Run(name, func(t *testing.T) {
			sb, tree := zygoteSandbox(t, layers)
			secret := "ghp_other" + randomHex(t)
			id := markID()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			first, err := sb.Start(ctx, []string{"bash", "-c", "sleep 305." + id + "; true"}, tree,
				pathEnv("OTHER_TOKEN="+secret), sandbox.Stdio{})
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(30 * time.Second); len(marked(id)) == 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if len(marked(id)) != 1 {
				t.Fatal("the first command's sleep does not run")
			}
			// the patterns go through a file: no process but the first has them in its argv or environment
			hunt := `printf 'ghp_other%s\n' "$HEX" > env.pat; printf '305.%s\n' "$ID" > cmd.pat; ` +
				`echo environ=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -a -c -f env.pat); ` +
				`echo cmdline=$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | grep -a -c -f cmd.pat); ` +
				`cat /proc/$PPID/environ && echo read-parent-environ; readlink /proc/$PPID/fd/* /proc/$PPID/cwd && echo read-parent-fds; true`
			hex := strings.TrimPrefix(secret, "ghp_other")
			out, _, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", hunt}, tree, pathEnv("HEX="+hex, "ID="+id))
			if len(marked(id)) != 1 {
				t.Error("the first command ended before the second looked")
			}
			cancel()
			if _, err := first.Wait(); err != nil {
				t.Fatal(err)
			}
			if layers == nil {
				if strings.Contains(out, "environ=0\n") {
					t.Errorf("unsandboxed, the hunt should have found the secret (the control failed):\n%s", out)
				}
				return
			}
			if !slices.Contains(layers, sandbox.LayerNamespaces) && strings.Contains(out, "cmdline=0\n") {
				t.Errorf("with Landlock alone the hunt should see the first's cmdline (the control):\n%s", out)
			}
			if !strings.Contains(out, "environ=0\n") {
				t.Errorf("the second command read the first's environment:\n%s", out)
			}
			// with Landlock alone /proc is the machine's: other processes are listed, their cmdlines readable
			if slices.Contains(layers, sandbox.LayerNamespaces) && !strings.Contains(out, "cmdline=0\n") {
				t.Errorf("the second command saw the first's processes:\n%s", out)
			}
			for _, bad := range []string{"read-parent-environ", "read-parent-fds", secret} {
				if strings.Contains(out, bad) {
					t.Errorf("the command got %q:\n%s", bad, out)
				}
			}
		})
	}
}

// TestZygoteCannotBeKilledOrTraced: a command sends SIGKILL, SIGTERM,
// SIGSTOP and SIGSEGV to its zygote and tries to ptrace it. With
// namespaces the zygote is the PID namespace's init with a handler for
// every signal: none is delivered, and the next command runs in the same
// zygote. With Landlock alone the seccomp filter refuses signals to the
// zygote (same user, same Landlock domain: nothing else would): no signal
// is sent either (TestLandlockGuardsItsParents tries every other way).
// ptrace fails under every layer (the zygote is not dumpable; Landlock
// scopes it too).
func TestZygoteCannotBeKilledOrTraced(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			sb, tree := zygoteSandbox(t, layers)
			if _, code, _ := runIn(t, t.Context(), sb, []string{"true"}, tree, pathEnv()); code != 0 {
				t.Fatal("the first command failed")
			}
			before := zygotePIDs()
			out, code, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", ptraceEnv + `=$PPID "$EXE"; echo ptrace=$?`}, tree,
				pathEnv("EXE="+exe))
			if !strings.Contains(out, "ptrace=1") || strings.Contains(out, "attached") || code != 0 {
				t.Errorf("ptrace of the zygote: %q exit %d", out, code)
			}
			kill := `for s in STOP SEGV TERM KILL; do kill -$s $PPID && echo sent $s; done; sleep 0.2; echo alive`
			p, err := sb.Start(t.Context(), []string{"bash", "-c", kill}, tree, pathEnv(), sandbox.Stdio{})
			if err != nil {
				t.Fatal(err)
			}
			code, waitErr := p.Wait()
			if code != 0 || waitErr != nil {
				t.Errorf("the killing command: exit %d, %v", code, waitErr)
			}
			if after := zygotePIDs(); !slices.Equal(before, after) {
				t.Errorf("zygotes %v before the attack, %v after: it died", before, after)
			}
			out, code, launch := runIn(t, t.Context(), sb, []string{"bash", "-c", "echo next"}, tree, pathEnv())
			if out != "next\n" || code != 0 || launch != sandbox.LaunchZygote {
				t.Errorf("the next command: %q exit %d via %s", out, code, launch)
			}
		})
	}
}

// TestZygoteLeaksNoDescriptor: a command has only its stdin, stdout and
// stderr: not the zygote's socket, another command's descriptors, nor
// what the runner itself inherited (the test binary has a descriptor 9
// left open, as a CI agent may leave some), through the zygote or a
// helper.
func TestZygoteLeaksNoDescriptor(t *testing.T) {
	leak, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	if err := unix.Dup2(int(leak.Fd()), 9); err != nil { // dup2's copy is inherited across exec
		t.Fatal(err)
	}
	defer unix.Close(9)
	for name, layers := range layerSets() {
		for launch, perCommand := range launchSets() {
			t.Run(name+"/"+launch, func(t *testing.T) {
				requireLayers(t, layers)
				tree := t.TempDir()
				sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers, PerCommandHelper: perCommand})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				for i := range 2 {
					out, code, _ := runIn(t, t.Context(), sb, []string{"ls", "-l", "/proc/self/fd/"}, tree, pathEnv())
					var fds []string
					for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
						f := strings.Fields(l)
						if len(f) < 3 || f[len(f)-2] != "->" {
							continue
						}
						fd, target := f[len(f)-3], f[len(f)-1]
						if fd != "0" && fd != "1" && fd != "2" && !strings.HasSuffix(target, "/fd") { // ls's own directory
							fds = append(fds, fd+" → "+target)
						}
					}
					if code != 0 || len(fds) > 0 {
						t.Errorf("command %d has descriptors beyond stdio (exit %d): %v\n%s", i, code, fds, out)
					}
				}
			})
		}
	}
}
