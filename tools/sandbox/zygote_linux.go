package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// zygoteArg is os.Args[1] of the zygote (see Main); os.Args[2] is its
// helperConfig (JSON) and fd 3 its end of the runner's socket.
const zygoteArg = "-runner-sandbox-zygote"

// zygoteFD is the zygote's end of the SOCK_SEQPACKET socket pair.
const zygoteFD = 3

// maxZygoteMsg bounds one message on the socket (a request holds the
// command's argv and environment). A larger request goes to a helper of
// its own; 128 KiB fits in the default socket buffer.
const maxZygoteMsg = 128 << 10

// zygoteMsg is one message on the zygote's socket, either way. The
// runner sends "run" (with the command's stdin, stdout and stderr as
// SCM_RIGHTS) and "kill"; the zygote sends "ready" once (Error set when
// the sandbox could not be set up) and "exit" when a command and
// everything it started are gone.
type zygoteMsg struct {
	Op     string   `json:"op"`
	Argv   []string `json:"argv,omitempty"`
	Dir    string   `json:"dir,omitempty"`
	Env    []string `json:"env,omitempty"`
	Code   int      `json:"code,omitempty"`   // exit: the exit status, -1 when killed by Signal
	Signal int      `json:"signal,omitempty"` // exit
	Error  string   `json:"error,omitempty"`  // ready: why the setup failed
}

// zygoteServer is the zygote's side: it runs one command at a time.
// Every signal it sends (kills) goes from the main thread, the one the
// commands fork from: where Landlock restricted each thread on its own
// (ABI < 8), the threads are sibling domains, and a signal from another
// thread to a command would be outside its scope.
type zygoteServer struct {
	ns      bool       // PID namespace init (else a child subreaper)
	mu      sync.Mutex // one writer on the socket
	pid     atomic.Int64
	running atomic.Bool
	wake    [2]int        // pipe: the reaper and the signal handler wake the main loop
	status  atomic.Uint32 // the command's syscall.WaitStatus, set by reap before it wakes the loop
}

// zygoteMain sets the layers of conf up once, says ready on fd 3 and then
// starts each command the runner asks for, forked from this (locked,
// capability-less, Landlocked) thread. It returns when the runner closes
// its end or dies, after killing whatever runs.
func zygoteMain(confJSON string) int {
	_, _ = unix.FcntlInt(zygoteFD, unix.F_SETFD, unix.FD_CLOEXEC) // never inherited by a command
	// A handler for every signal: a PID namespace's init gets no signal
	// sent from inside the namespace that it has no handler for, so no
	// command can kill, stop or crash the zygote; the Go runtime resets
	// them to the default in each command it forks.
	signal.Notify(make(chan os.Signal, 1))
	var conf helperConfig
	if err := json.Unmarshal([]byte(confJSON), &conf); err != nil {
		return helperFailed
	}
	z := &zygoteServer{ns: slices.Contains(conf.Layers, LayerNamespaces)}
	if err := unix.Pipe2(z.wake[:], unix.O_CLOEXEC); err != nil {
		return helperFailed
	}
	if !z.ns {
		// Landlock only: the death signal is SIGTERM (sysProcAttr); the
		// main loop kills what runs, then goes.
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			_, _ = unix.Write(z.wake[1], []byte{'t'})
		}()
	}
	if err := setup(conf); err != nil {
		z.send(zygoteMsg{Op: "ready", Error: err.Error()}, nil)
		return helperFailed
	}
	// Once per zygote, not per command: a goroutine of this process, which
	// the kills after each command do not reach.
	if _, err := startForwarder(conf.Proxy); err != nil {
		z.send(zygoteMsg{Op: "ready", Error: err.Error()}, nil)
		return helperFailed
	}
	z.send(zygoteMsg{Op: "ready"}, nil)
	return z.serve()
}

// send writes m (and fds) to the runner.
func (z *zygoteServer) send(m zygoteMsg, fds []int) {
	b, _ := json.Marshal(m)
	z.mu.Lock()
	defer z.mu.Unlock()
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_ = unix.Sendmsg(zygoteFD, b, oob, nil, 0)
}

// serve reads requests and ends of commands until the runner's end is
// closed or it dies.
func (z *zygoteServer) serve() int {
	buf := make([]byte, maxZygoteMsg)
	oob := make([]byte, unix.CmsgSpace(3*4))
	poll := []unix.PollFd{{Fd: zygoteFD, Events: unix.POLLIN}, {Fd: int32(z.wake[0]), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(poll, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			killAll()
			return helperFailed
		}
		if poll[1].Revents != 0 {
			var b [1]byte
			_, _ = unix.Read(z.wake[0], b[:])
			if b[0] == 't' {
				killAll() // the runner is gone (Landlock only: its death signal)
				return 0
			}
			z.finish()
			continue // the request, if any, on the next round
		}
		if poll[0].Revents == 0 {
			continue
		}
		n, oobn, _, _, err := unix.Recvmsg(zygoteFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil || n == 0 {
			killAll() // the runner closed the sandbox or is gone
			return 0
		}
		fds := receivedFDs(oob[:oobn])
		var m zygoteMsg
		if err := json.Unmarshal(buf[:n], &m); err != nil {
			m.Op = "bad"
		}
		switch m.Op {
		case "run":
			z.run(m, fds)
		case "kill":
			z.kill()
		}
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	}
}

// receivedFDs are the descriptors an SCM_RIGHTS message carried.
func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

// run starts one command with fds as its stdin, stdout and stderr. What
// keeps it from starting is said on its stderr, with the exit codes a
// shell uses (127 not found, 126 cannot run), as the helper does.
func (z *zygoteServer) run(m zygoteMsg, fds []int) {
	fail := func(code int, format string, args ...any) {
		if len(fds) == 3 {
			_, _ = unix.Write(fds[2], []byte(fmt.Sprintf("runner sandbox: "+format+"\n", args...)))
		}
		z.send(zygoteMsg{Op: "exit", Code: code}, nil)
	}
	if len(fds) != 3 || len(m.Argv) == 0 || z.running.Load() {
		fail(helperFailed, "bad request to the zygote (a command is running, or no argv or stdio)")
		return
	}
	path, err := lookPathIn(m.Argv[0], m.Env)
	if err != nil {
		fail(127, "%v", err)
		return
	}
	// A command's stdio blocks, as a shell's does: the runner's pipe is
	// non-blocking on its side (Go's poller), and shared so, a write to it
	// once it is full would fail with EAGAIN (seq: write error, exit 1).
	// What os/exec does with an *os.File (Fd) for a helper.
	for _, fd := range fds {
		_ = unix.SetNonblock(fd, false)
	}
	// syscall.ForkExec, not os.StartProcess: no pidfd probe, one fork
	// less. Forked from this thread: the one whose capability bounding
	// set was emptied (Main locked it). The death signal follows this
	// thread, which lives as long as the zygote.
	pid, err := syscall.ForkExec(path, m.Argv, &syscall.ProcAttr{
		Dir: m.Dir, Env: m.Env, Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fail(126, "start %s: %v", path, err)
		return
	}
	z.running.Store(true)
	z.pid.Store(int64(pid))
	go z.reap(pid)
}

// reap waits for the command (reaping the orphans that end meanwhile:
// the zygote is the PID namespace's init or a subreaper, every orphan is
// its child) and wakes the main loop, which finishes.
func (z *zygoteServer) reap(pid int) {
	var ws syscall.WaitStatus
	for {
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			ws = syscall.WaitStatus(helperFailed << 8)
			break
		}
		if got == pid {
			break
		}
	}
	z.status.Store(uint32(ws))
	_, _ = unix.Write(z.wake[1], []byte{'x'})
}

// finish kills and reaps everything the command left and reports its
// exit.
func (z *zygoteServer) finish() {
	killAll()
	ws := syscall.WaitStatus(z.status.Load())
	m := zygoteMsg{Op: "exit", Code: ws.ExitStatus()}
	if ws.Signaled() {
		m.Code, m.Signal = -1, int(ws.Signal())
	}
	z.pid.Store(0)
	z.running.Store(false)
	z.send(m, nil)
}

// kill kills the running command and everything it started (timeout or
// cancel); reap then reports its end.
func (z *zygoteServer) kill() {
	if z.pid.Load() == 0 {
		return
	}
	if z.ns {
		_ = syscall.Kill(-1, syscall.SIGKILL) // as init: every process of the namespace but the zygote
		return
	}
	for _, k := range children(os.Getpid()) {
		killTree(k)
	}
}

// lookPathIn finds an executable name in the PATH of env (exec.LookPath
// reads the zygote's own, empty, environment).
func lookPathIn(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", fmt.Errorf("exec %s: %w", name, err)
		}
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p := filepath.Join(dir, name); executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

// executable is nil when p is a regular file this process may execute.
func executable(p string) error {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return syscall.EISDIR
	}
	return unix.Access(p, unix.X_OK)
}
