package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// fakeRunnerEnv holds a fakeRunner (JSON): the test binary then plays the
// runner, in a process of its own whose environment holds secrets.
const fakeRunnerEnv = "SANDBOX_TEST_FAKE_RUNNER"

// dialUnixEnv names a unix socket the test binary connects to (exit 0 when
// it could, 1 when not): an attack on a daemon's socket.
const dialUnixEnv = "SANDBOX_TEST_DIAL_UNIX"

func dialUnix(path string) int {
	c, err := (&net.Dialer{}).DialContext(context.Background(), "unix", path)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	_, _ = c.Write([]byte("pwned"))
	c.Close()
	fmt.Println("connected")
	return 0
}

// ptraceEnv names a pid the test binary tries to attach to with ptrace
// (exit 0 and "attached" when it could, 1 when not): an attack on the
// zygote.
const ptraceEnv = "SANDBOX_TEST_PTRACE"

func ptrace(pid string) int {
	n, err := strconv.Atoi(pid)
	if err == nil {
		runtime.LockOSThread() // ptrace is per thread
		err = syscall.PtraceAttach(n)
	}
	if err != nil {
		fmt.Println("ptrace:", err)
		return 1
	}
	fmt.Println("attached")
	_ = syscall.PtraceDetach(n)
	return 0
}

// fakeRunner is one sandboxed command run by the fake runner.
type fakeRunner struct {
	Policy sandbox.Policy
	Argv   []string
	Dir    string
	Env    []string
	// Launch is how the command must have started ("": any).
	Launch sandbox.Launch
	// Stdin: the command's stdin is the fake runner's.
	Stdin bool
}

func TestMain(m *testing.M) {
	sandbox.Main()
	if conf := os.Getenv(fakeRunnerEnv); conf != "" {
		os.Exit(runFake(conf))
	}
	if path := os.Getenv(dialUnixEnv); path != "" {
		os.Exit(dialUnix(path))
	}
	if pid := os.Getenv(ptraceEnv); pid != "" {
		os.Exit(ptrace(pid))
	}
	if name := os.Getenv(syscallAttackEnv); name != "" {
		os.Exit(syscallAttack(name))
	}
	os.Exit(m.Run())
}

// runFake runs the command like the runner does: Main first, then a
// Sandbox, the command started with Start (through the zygote unless the
// policy pins helpers) with an explicit environment (plus ATTACK_PIDS: its
// own pid and its parent's), output to stdout and stderr.
func runFake(conf string) int {
	var fr fakeRunner
	if err := json.Unmarshal([]byte(conf), &fr); err != nil {
		fmt.Fprintln(os.Stderr, "fake runner:", err)
		return 100
	}
	sb, err := sandbox.New(fr.Policy)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake runner:", err)
		return 101
	}
	defer sb.Close()
	env := append(fr.Env, "ATTACK_PIDS="+strconv.Itoa(os.Getpid())+" "+strconv.Itoa(os.Getppid()))
	stdio := sandbox.Stdio{Stdout: os.Stdout, Stderr: os.Stderr}
	if fr.Stdin {
		stdio.Stdin = os.Stdin
	}
	p, err := sb.Start(context.Background(), fr.Argv, fr.Dir, env, stdio)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake runner:", err)
		return 102
	}
	if code, err := p.Wait(); err != nil || code != 0 {
		fmt.Fprintf(os.Stderr, "fake runner: exit %d %v\n", code, err)
		return 103
	}
	if want := fr.Launch; want != "" && p.Launch() != want {
		fmt.Fprintf(os.Stderr, "fake runner: the command started via %s, not %s (%s)\n", p.Launch(), want, p.Note())
		return 104
	}
	return 0
}
