package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperFailed is the helper's exit code when it could not set the
// sandbox up (the command did not run), as env(1) uses 125.
const helperFailed = 125

// init runs the helper and the zygote re-execs as soon as this package's
// own imports are initialised. Go initialises packages in import-path
// order as their imports allow, so a re-exec skips most of the binary's
// other package inits (the telemetry, cloud and GitHub clients): 225 of
// 336 run, about 3 ms of CPU and 5 MiB resident less per helper start.
func init() { //nolint:gochecknoinits // the re-exec must run before the rest of the binary initialises
	if len(os.Args) >= 3 && os.Args[1] == helperArg {
		closeInherited(3)
		runtime.LockOSThread() // credentials and the bounding set are per thread; the command forks from this one
		os.Exit(helperMain(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) == 3 && os.Args[1] == zygoteArg {
		closeInherited(zygoteFD + 1)
		runtime.LockOSThread() // as the helper: every command forks from this thread
		os.Exit(zygoteMain(os.Args[2]))
	}
}

// Main must be the first call in main() of every binary that builds a
// Sandbox, and in TestMain of test binaries that do (before m.Run). The
// helper and zygote re-execs never get there: this package's init runs
// them and exits. Main turns off PR_SET_DUMPABLE for this process (its
// /proc/<pid>/environ and memory become unreadable to other processes of
// the same user that are not root) and records that it was called.
func Main() {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	mainCalled.Store(true)
}

// reaperAvailable reports that mode-off commands run under the helper
// as a reaper (offCommand).
func reaperAvailable() bool { return true }

// closeInherited marks every descriptor from first on close-on-exec: the
// runner may itself have inherited open descriptors from whatever started
// it (a CI agent, a shell), and they must not reach the commands.
func closeInherited(first int) {
	_ = unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
}

// helperMain sets up the layers of conf and runs argv; it returns the exit
// code. Errors go to stderr prefixed "runner sandbox:".
func helperMain(confJSON string, argv []string) int {
	var conf helperConfig
	if err := json.Unmarshal([]byte(confJSON), &conf); err != nil || len(argv) == 0 {
		fmt.Fprintf(os.Stderr, "runner sandbox: bad helper invocation: %v\n", err)
		return helperFailed
	}
	if err := setup(conf); err != nil {
		fmt.Fprintf(os.Stderr, "runner sandbox: %v\n", err)
		return helperFailed
	}
	if conf.Probe {
		return 0
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner sandbox: %v\n", err)
		return 127
	}
	forwarding, err := startForwarder(conf.Proxy)
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner sandbox: %v\n", err)
		return helperFailed
	}
	if slices.Contains(conf.Layers, LayerNamespaces) && !forwarding { // the forwarder needs the helper to stay
		// The command becomes the PID namespace's init: when it exits, or
		// is killed, or the runner dies (the death signal survives exec),
		// the kernel kills everything else in the namespace.
		err := syscall.Exec(path, argv, os.Environ())
		fmt.Fprintf(os.Stderr, "runner sandbox: exec %s: %v\n", path, err)
		return 126
	}
	return supervise(path, argv)
}

// startForwarder starts the forwarder to the allow list's proxy on
// 127.0.0.1:Port of this network namespace, when conf asks for one; it
// reports whether it did.
func startForwarder(conf *proxyConf) (bool, error) {
	if conf == nil || !conf.Forward {
		return false, nil
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(conf.Port)))
	if err != nil {
		return false, fmt.Errorf("the network proxy's forwarder: %w", err)
	}
	go forward(ln, conf.Socket)
	return true, nil
}

// setup applies the layers to this process, in order: namespaces (mounts,
// /proc, loopback, capabilities), then Landlock and seccomp.
func setup(conf helperConfig) error {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if conf.Reaper { // mode off: nothing but the subreaper
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("subreaper: %w", err)
		}
		if os.Getppid() == 1 {
			return fmt.Errorf("the runner is gone")
		}
		return nil
	}
	ns := slices.Contains(conf.Layers, LayerNamespaces)
	if ns {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if err := setupMounts(conf); err != nil {
			return fmt.Errorf("mounts: %w", err)
		}
		if err := os.Chdir(wd); err != nil { // the directory as the new mounts show it
			return err
		}
		if !conf.Network {
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("loopback: %w", err)
			}
		}
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("subreaper: %w", err)
	}
	// Without capabilities even uid 0 cannot undo the binds, bypass file
	// modes or read a non-dumpable process's memory and environment (the
	// runner's: Main turned PR_SET_DUMPABLE off).
	if ns || os.Geteuid() == 0 {
		if err := dropCapabilities(); err != nil {
			return fmt.Errorf("capabilities: %w", err)
		}
	}
	if slices.Contains(conf.Layers, LayerLandlock) {
		if err := restrictLandlock(conf, ns); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if seccompArch != 0 {
		rules := rulesFor(ns, conf.Network, conf.Proxy != nil)
		if !ns { // with namespaces the zygote or command is init: immune
			rules.guard, rules.groups = guarded()
		}
		if err := installFilter(rules); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	if os.Getppid() == 1 && !ns {
		return fmt.Errorf("the runner is gone")
	}
	return nil
}

// supervise starts the command and waits for it, reaping every process
// handed to it (it is the PID namespace's init, or a child subreaper). On
// SIGTERM or SIGINT it passes the signal on, and kills everything left
// killWait later; when the command exits, whatever it left running is
// killed. The exit code is the command's (128+n when killed by signal n).
func supervise(path string, argv []string) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// syscall.ForkExec, not os.StartProcess: no pidfd probe, one fork
	// less. The command gets a process group of its own: kill(0) from it
	// must not reach the helper (signals to the helper are refused by the
	// seccomp filter; its group is the command's only way to it).
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner sandbox: %v\n", err)
		return 126
	}
	done := make(chan int, 1)
	go func() { done <- reap(pid) }()
	var deadline <-chan time.Time
	for {
		select {
		case code := <-done:
			killAll()
			return code
		case sig := <-sigs:
			_ = syscall.Kill(pid, sig.(syscall.Signal))
			if deadline == nil {
				deadline = time.After(killWait)
			}
		case <-deadline:
			killAll()
		}
	}
}

// reap waits for any child until pid exits, and returns pid's exit code.
func reap(pid int) int {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return helperFailed
		}
		if got != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// killAll kills every process the helper has left: as a PID namespace's
// init, kill(-1) reaches all of them; as a subreaper, orphans are
// reparented to it, so it kills its children until there are none.
func killAll() {
	if os.Getpid() == 1 {
		_ = syscall.Kill(-1, syscall.SIGKILL)
		for {
			if _, err := syscall.Wait4(-1, nil, 0, nil); err == syscall.ECHILD {
				return
			}
		}
	}
	for range 100 {
		kids := children(os.Getpid())
		if len(kids) == 0 {
			return
		}
		for _, k := range kids {
			killTree(k)
		}
		for {
			if pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// killTree kills pid's descendants (from /proc/<pid>/task/*/children),
// then pid.
func killTree(pid int) {
	_ = syscall.Kill(pid, syscall.SIGSTOP) // no more forks while we walk
	for _, k := range children(pid) {
		killTree(k)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
