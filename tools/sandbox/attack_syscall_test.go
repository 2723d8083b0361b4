package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// syscallAttackEnv names one attack of syscallAttacks the test binary
// makes (exit 0: it worked; 1: refused, with the error on stdout).
const syscallAttackEnv = "SANDBOX_TEST_SYSCALL_ATTACK"

// syscallAttacks are the kernel interfaces a command could leave the
// sandbox through without touching a file or an inet socket. The
// argument comes from SANDBOX_TEST_ATTACK_ARG.
var syscallAttacks = map[string]func(arg string) error{
	// vsock is not bound by network namespaces: the VM's host (CID 2).
	"vsock": func(string) error {
		fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	// raw packets: AF_PACKET.
	"packet": func(string) error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	// the user's keyring (shared with the runner: same uid).
	"keyctl": func(string) error {
		_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
		return err
	},
	// io_uring can open sockets past a socket(2) filter.
	"io_uring": func(string) error {
		var params [120]byte
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			return errno
		}
		unix.Close(int(fd))
		return nil
	},
	// a datagram to a path socket (journald, a notify socket) with sendto.
	"sendto-unix": func(path string) error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Sendto(fd, []byte("pwned"), 0, &unix.SockaddrUnix{Name: path})
	},
	// TIOCSTI on stdin (a terminal): input for the shell the runner ran in.
	"tiocsti": func(string) error {
		b := byte('x')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&b)))
		if errno != 0 {
			return errno
		}
		return nil
	},
}

func syscallAttack(name string) int {
	f, ok := syscallAttacks[name]
	if !ok {
		fmt.Println("unknown attack", name)
		return 2
	}
	if err := f(os.Getenv("SANDBOX_TEST_ATTACK_ARG")); err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	fmt.Println("worked")
	return 0
}

// attackIn runs the syscall attack name in a sandbox of layers (nil with
// mode off), launched both ways, and reports the launches where it worked.
func attackIn(t *testing.T, layers []sandbox.Layer, name, arg string) []string {
	t.Helper()
	tree := t.TempDir()
	pol := sandbox.Policy{WorkTree: tree, Layers: layers}
	if layers == nil {
		pol.Mode = sandbox.ModeOff
	}
	sb, err := sandbox.New(pol)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	exe, _ := os.Executable()
	var worked []string
	for launch, r := range runLaunches(t, sb, []string{exe}, tree, []string{syscallAttackEnv + "=" + name, "SANDBOX_TEST_ATTACK_ARG=" + arg}) {
		if r.code > 1 {
			t.Fatalf("attack %s (%s): exit %d\n%s", name, launch, r.code, r.out)
		}
		if r.ok {
			worked = append(worked, launch+": "+r.out)
		}
	}
	return worked
}

// runLaunches runs argv in sb both ways the runner starts commands: a
// helper of its own (Command: MCP servers) and the run's zygote (Start:
// bash and the checks). It returns each one's combined output, keyed by
// launch, and whether it exited 0.
func runLaunches(t *testing.T, sb *sandbox.Sandbox, argv []string, dir string, env []string) map[string]launchResult {
	t.Helper()
	out := map[string]launchResult{}
	cmd, err := sb.Command(t.Context(), argv, dir, env)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cmd.CombinedOutput()
	out["command"] = launchResult{ok: err == nil, out: strings.TrimSpace(string(b)), code: cmd.ProcessState.ExitCode()}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := sb.Start(t.Context(), argv, dir, env, sandbox.Stdio{Stdout: f, Stderr: f})
	if err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait()
	b, _ = os.ReadFile(f.Name())
	out["start/"+string(p.Launch())] = launchResult{ok: err == nil && code == 0, out: strings.TrimSpace(string(b)), code: code}
	return out
}

// launchResult is how one launch of a command ended.
type launchResult struct {
	ok   bool
	code int
	out  string
}

// TestSyscallAttacks: vsock, packet sockets, the keyrings and io_uring are
// refused under each layer on its own; unsandboxed the same program gets
// them (the control; skipped where this machine has none of it).
func TestSyscallAttacks(t *testing.T) {
	for _, name := range []string{"vsock", "packet", "keyctl", "io_uring"} {
		t.Run(name, func(t *testing.T) {
			if worked := attackIn(t, nil, name, ""); len(worked) < 2 {
				t.Skipf("unsandboxed, %s does not work on this machine either: %q", name, worked)
			}
			for set, layers := range layerSets() {
				if !slices.Equal(layers, availableOf(layers)) {
					continue
				}
				if worked := attackIn(t, layers, name, ""); len(worked) > 0 {
					t.Errorf("%s: %s worked in the sandbox: %q", set, name, worked)
				}
			}
		})
	}
}

// availableOf is the layers of ls this machine has.
func availableOf(ls []sandbox.Layer) []sandbox.Layer {
	var out []sandbox.Layer
	for _, l := range ls {
		if slices.Contains(sandbox.Probe().Available(), l) {
			out = append(out, l)
		}
	}
	return out
}

// TestDaemonSocketsUnreachable: a daemon listening on a path socket the
// runner never named (a session bus in $XDG_RUNTIME_DIR, an agent in
// /tmp) is unreachable: with namespaces every socket bound when the
// sandbox is built is covered; with Landlock only connect(2) and sendto(2)
// with an address are refused. Unsandboxed the same program reaches it.
func TestDaemonSocketsUnreachable(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "bus")
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", stream)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dgram := filepath.Join(dir, "notify")
	pc, err := (&net.ListenConfig{}).ListenPacket(t.Context(), "unixgram", dgram)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	received := make(chan struct{}, 16)
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			received <- struct{}{}
		}
	}()
	// reached is only asked when the command's connect or sendto
	// succeeded: then the connection or datagram is queued, and what is
	// left is this test's goroutine taking it, which a loaded machine can
	// delay far beyond any short wait (a fixed 200 ms let the control
	// fail). The long wait is spent only when a sandboxed command reached
	// some other socket at the path.
	reached := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(30 * time.Second):
			return false
		}
	}
	exe, _ := os.Executable()
	for set, layers := range map[string][]sandbox.Layer{"off": nil, "namespaces": {sandbox.LayerNamespaces},
		"landlock": {sandbox.LayerLandlock}, "both": {sandbox.LayerNamespaces, sandbox.LayerLandlock}} {
		if layers != nil && !slices.Equal(layers, availableOf(layers)) {
			continue
		}
		pol := sandbox.Policy{WorkTree: t.TempDir(), Layers: layers}
		if layers == nil {
			pol.Mode = sandbox.ModeOff
		}
		sb, err := sandbox.New(pol)
		if err != nil {
			t.Fatal(err)
		}
		for _, att := range []struct {
			env  []string
			seen chan struct{}
		}{
			{[]string{dialUnixEnv + "=" + stream}, accepted},
			{[]string{syscallAttackEnv + "=sendto-unix", "SANDBOX_TEST_ATTACK_ARG=" + dgram}, received},
		} {
			for launch, r := range runLaunches(t, sb, []string{exe}, pol.WorkTree, att.env) {
				if got := r.ok && reached(att.seen); got != (layers == nil) {
					t.Errorf("%s (%s): %s reached the daemon = %v (%s)", set, launch, att.env[0], got, r.out)
				}
			}
		}
		sb.Close()
	}
}

// openPty opens a pseudo-terminal pair.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestTerminalInjection: a runner started from a terminal (its
// controlling terminal, inherited by the commands' session) cannot have a
// sandboxed command push input into it with TIOCSTI (the shell would run
// it after the runner exits). Unsandboxed the same program can.
func TestTerminalInjection(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("dev.tty.legacy_tiocsti=0: this kernel refuses TIOCSTI to everyone")
	}
	exe, _ := os.Executable()
	for set, layers := range map[string][]sandbox.Layer{"off": nil, "namespaces": {sandbox.LayerNamespaces},
		"landlock": {sandbox.LayerLandlock}, "both": {sandbox.LayerNamespaces, sandbox.LayerLandlock}} {
		if layers != nil && !slices.Equal(layers, availableOf(layers)) {
			continue
		}
		_, slave := openPty(t)
		tree := t.TempDir()
		pol := sandbox.Policy{WorkTree: tree, Layers: layers}
		if layers == nil {
			pol.Mode = sandbox.ModeOff
		}
		conf, _ := json.Marshal(fakeRunner{Policy: pol, Argv: []string{exe}, Dir: tree,
			Env: []string{syscallAttackEnv + "=tiocsti"}, Stdin: true})
		cmd := exec.CommandContext(t.Context(), exe)
		cmd.Env = []string{fakeRunnerEnv + "=" + string(conf)}
		cmd.Stdin = slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		out, _ := cmd.CombinedOutput()
		worked := strings.Contains(string(out), "worked")
		if worked != (layers == nil) {
			t.Errorf("%s: TIOCSTI worked = %v: %s", set, worked, out)
		}
	}
}

// TestNestedHidden: a hidden directory that holds a listening socket and
// another hidden file ($XDG_RUNTIME_DIR and its bus) hides both; the
// sandbox still starts under every layer.
func TestNestedHidden(t *testing.T) {
	dir := t.TempDir()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hidden-data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, layers := range layerSets() {
		if !slices.Equal(layers, availableOf(layers)) {
			continue
		}
		sb, err := sandbox.New(sandbox.Policy{WorkTree: t.TempDir(), Layers: layers, Hidden: []string{dir, filepath.Join(dir, "f")}})
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := sb.Command(t.Context(), []string{"bash", "-c", `cat "$0"/f; echo ran`, dir}, "/", []string{"PATH=" + os.Getenv("PATH")})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "ran") || strings.Contains(string(out), "hidden-data") {
			t.Errorf("%s: %s", name, out)
		}
		sb.Close()
	}
}
