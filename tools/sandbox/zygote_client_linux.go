package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// zygoteReadyTimeout bounds the zygote's set-up (the namespaces, mounts
// and Landlock it prepares once).
const zygoteReadyTimeout = 30 * time.Second

// maxIdleZygotes is how many idle zygotes a Sandbox keeps (one more per
// command running at the same time; more are stopped when they finish).
const maxIdleZygotes = 2

// zygotePool holds a Sandbox's zygotes. A zygote runs one command at a
// time, so that what a command leaves behind is killed before the next
// one starts and no two commands share a PID namespace.
type zygotePool struct {
	mu     sync.Mutex
	idle   []*zygote
	all    map[*zygote]bool
	broken error // a zygote could not start: every command gets a helper
	closed bool
	// retiring counts the retired zygotes still stopping (close waits).
	retiring sync.WaitGroup
}

// zygote is the runner's side of one zygote process.
type zygote struct {
	cmd   *exec.Cmd
	conn  *net.UnixConn
	gen   int            // the covers' generation it was set up with
	exits chan zygoteMsg // the commands' ends; closed when the zygote is gone
	gone  chan struct{}  // closed once the process was reaped
	mu    sync.Mutex     // orders a kill before the zygote goes back to the pool
}

// get returns an idle zygote, or starts one.
func (p *zygotePool) get(s *Sandbox) (*zygote, error) {
	p.mu.Lock()
	switch {
	case p.broken != nil:
		defer p.mu.Unlock()
		return nil, p.broken
	case p.closed:
		defer p.mu.Unlock()
		return nil, errors.New("the sandbox is closed")
	case len(p.idle) > 0 && p.idle[len(p.idle)-1].gen == s.generation():
		defer p.mu.Unlock()
		z := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		return z, nil
	}
	p.mu.Unlock()
	p.retire() // any idle one left is of an older generation
	z, err := s.startZygote()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.broken = fmt.Errorf("the zygote could not start, each command gets a helper of its own: %w", err)
		return nil, p.broken
	}
	if p.all == nil {
		p.all = map[*zygote]bool{}
	}
	p.all[z] = true
	return z, nil
}

// put takes z back after its command ended; one set up with covers of an
// older generation than gen is stopped.
func (p *zygotePool) put(z *zygote, gen int) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxIdleZygotes && z.gen == gen {
		p.idle = append(p.idle, z)
		p.mu.Unlock()
		return
	}
	delete(p.all, z)
	p.mu.Unlock()
	z.stop()
}

// discard forgets a zygote that failed.
func (p *zygotePool) discard(z *zygote) {
	p.mu.Lock()
	delete(p.all, z)
	p.mu.Unlock()
	z.stop()
}

// retire stops the idle zygotes: their covers are out of date (refresh).
// They stop in the background (the next command need not wait for them;
// close does). A running one is stopped when its command ends (put).
func (p *zygotePool) retire() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	for _, z := range idle {
		delete(p.all, z)
		p.retiring.Add(1)
	}
	p.mu.Unlock()
	for _, z := range idle {
		go func() {
			defer p.retiring.Done()
			z.stop()
		}()
	}
}

// close stops every zygote, killing the commands they still run.
func (p *zygotePool) close() {
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all, p.idle = nil, nil
	p.mu.Unlock()
	for z := range all {
		z.stop()
	}
	p.retiring.Wait()
}

// startZygote starts a zygote with the sandbox's configuration and waits
// until it is ready. Its death signal follows the thread that started it
// (PR_SET_PDEATHSIG): the runner never ends a locked thread that starts
// commands. Closing the socket (Close) or the runner's death ends it.
func (s *Sandbox) startZygote() (*zygote, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "zygote"), os.NewFile(uintptr(fds[1]), "zygote")
	defer theirs.Close()
	fc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, err
	}
	conn, ok := fc.(*net.UnixConn)
	if !ok {
		fc.Close()
		return nil, errors.New("the zygote's socket is not a unix socket")
	}
	cfg, gen := s.config()
	conf, err := json.Marshal(cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	cmd := exec.Command(s.exe, zygoteArg, string(conf)) //nolint:noctx // lives as long as the Sandbox; Close ends it
	cmd.Args[0] = "runner-sandbox-zygote"
	if len(cfg.Writable) > 0 {
		cmd.Dir = cfg.Writable[0] // the work tree; mode off: the runner's directory
	}
	cmd.Env = []string{} // each command brings its own
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr, _ = sysProcAttr(s.layers, cfg.Network)
	if err := startMapped(cmd); err != nil {
		conn.Close()
		return nil, err
	}
	z := &zygote{cmd: cmd, conn: conn, gen: gen, exits: make(chan zygoteMsg, 1), gone: make(chan struct{})}
	_ = conn.SetReadDeadline(time.Now().Add(zygoteReadyTimeout))
	m, err := z.read()
	_ = conn.SetReadDeadline(time.Time{})
	if err == nil && m.Op == "ready" && m.Error != "" {
		err = errors.New(m.Error)
	} else if err == nil && m.Op != "ready" {
		err = fmt.Errorf("unexpected %q before ready", m.Op)
	}
	if err != nil {
		conn.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("zygote set-up: %w", err)
	}
	go z.readLoop()
	return z, nil
}

// read reads one message.
func (z *zygote) read() (zygoteMsg, error) {
	buf := make([]byte, 4096)
	n, _, _, _, err := z.conn.ReadMsgUnix(buf, nil)
	if err != nil {
		return zygoteMsg{}, err
	}
	if n == 0 {
		return zygoteMsg{}, errors.New("the zygote exited")
	}
	var m zygoteMsg
	if err := json.Unmarshal(buf[:n], &m); err != nil {
		return zygoteMsg{}, fmt.Errorf("bad message from the zygote: %w", err)
	}
	return m, nil
}

// readLoop hands each exit to the waiting Process until the zygote goes.
func (z *zygote) readLoop() {
	defer func() {
		close(z.exits)
		_ = z.cmd.Wait()
		close(z.gone)
	}()
	for {
		m, err := z.read()
		if err != nil {
			return
		}
		if m.Op == "exit" {
			z.exits <- m
		}
	}
}

// stop closes the socket (the zygote kills what runs and exits) and
// waits a while for it to go, then kills it.
func (z *zygote) stop() {
	z.conn.Close()
	select {
	case <-z.gone:
	case <-time.After(5 * time.Second):
		_ = z.cmd.Process.Kill()
		<-z.gone
	}
}

// startInZygote runs one command in a zygote (see Start).
func (s *Sandbox) startInZygote(ctx context.Context, argv []string, dir string, env []string, stdio Stdio) (*Process, error) {
	req, err := json.Marshal(zygoteMsg{Op: "run", Argv: argv, Dir: dir, Env: env})
	if err != nil {
		return nil, err
	}
	if len(req) > maxZygoteMsg {
		return nil, fmt.Errorf("the command and its environment take %d bytes, more than a zygote request holds (%d)", len(req), maxZygoteMsg)
	}
	if s.exe == "" {
		return nil, errors.New("the runner's own executable is unknown")
	}
	z, err := s.zygotes.get(s)
	if err != nil {
		return nil, err
	}
	if err := z.send(req, stdio); err != nil {
		s.zygotes.discard(z)
		return nil, fmt.Errorf("the zygote did not take the command: %w", err)
	}
	finished, exited := false, make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		z.mu.Lock()
		defer z.mu.Unlock()
		if finished {
			return
		}
		kill, _ := json.Marshal(zygoteMsg{Op: "kill"})
		_, _, _ = z.conn.WriteMsgUnix(kill, nil, nil)
		go func() {
			select {
			case <-exited:
			case <-time.After(killWait): // a zygote that does not answer (stopped by its command, Landlock only) is killed
				_ = z.cmd.Process.Kill()
			}
		}()
	})
	p := &Process{launch: LaunchZygote}
	p.wait = func() (int, error) {
		m, ok := <-z.exits
		close(exited)
		stop()
		z.mu.Lock()
		finished = true // a kill sent by now reaches the zygote before any next command
		z.mu.Unlock()
		if !ok {
			s.zygotes.discard(z)
			return -1, errors.New("sandbox: the zygote ended while the command ran")
		}
		s.zygotes.put(z, s.generation())
		return m.Code, nil
	}
	return p, nil
}

// send passes the request with the command's stdin, stdout and stderr
// (/dev/null for nil ones) to the zygote.
func (z *zygote) send(req []byte, stdio Stdio) error {
	files := []*os.File{stdio.Stdin, stdio.Stdout, stdio.Stderr}
	for i, f := range files {
		if f != nil {
			continue
		}
		flag := os.O_WRONLY
		if i == 0 {
			flag = os.O_RDONLY
		}
		null, err := os.OpenFile(os.DevNull, flag, 0)
		if err != nil {
			return err
		}
		defer null.Close()
		files[i] = null
	}
	fds := make([]int, len(files))
	for i, f := range files {
		rc, err := f.SyscallConn() // not Fd() here: the zygote makes them blocking for the command (run)
		if err != nil {
			return err
		}
		if err := rc.Control(func(fd uintptr) { fds[i] = int(fd) }); err != nil {
			return err
		}
	}
	_, _, err := z.conn.WriteMsgUnix(req, unix.UnixRights(fds...), nil)
	runtime.KeepAlive(files) // the descriptors stay open until the kernel holds its own
	return err
}
