package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is a running stdio server. The runner owns its lifetime (the
// SDK only sees the pipes): it reaps the process as soon as it exits, so a
// crash is noticed at once and its exit status is known, and stop ends it
// and whatever it started in its process group.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of the server's stdout
	done   chan struct{}
}

// startProcess starts cmd with stdin and stdout on pipes (stderr is the
// caller's, set on cmd) and reaps it in the background.
func startProcess(cmd *exec.Cmd) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close() // the child holds its ends now
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended (and was reaped).
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// status describes how the process ended, waiting up to wait for it.
func (p *process) status(wait time.Duration) string {
	if !p.exited() && !p.wait(wait) {
		return "still running"
	}
	return p.cmd.ProcessState.String()
}

// stop ends the server the way the MCP spec asks for stdio: close its
// stdin, wait, SIGTERM, wait, then cancel (the command's own kill, e.g. a
// sandbox's) and SIGKILL, each wait terminateGrace; then the rest of its
// process group is killed and the pipes closed.
func (p *process) stop(cancel context.CancelFunc) {
	_ = p.stdin.Close()
	if !p.wait(terminateGrace) {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		if !p.wait(terminateGrace) {
			cancel()
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	killGroup(p.cmd.Process.Pid)
	_ = p.stdout.Close()
}

// wait waits up to d for the process to end.
func (p *process) wait(d time.Duration) bool {
	if p.exited() {
		return true
	}
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// String names the process for logs.
func (p *process) String() string { return fmt.Sprintf("pid %d", p.cmd.Process.Pid) }
