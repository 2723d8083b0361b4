package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// pipeDrainDelay is how long output is still read after the command and
// its process group were killed (a process that left the group may hold
// the pipe open).
const pipeDrainDelay = 2 * time.Second

// copyBufs are the buffers the output of commands is copied through.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// runSpec is one shell command to run.
type runSpec struct {
	shell   string
	command string
	dir     string
	env     []string
	timeout time.Duration
	out     io.Writer
	sandbox *sandbox.Sandbox // nil: a plain process group (mode off)
}

// runOutcome is how the command ended.
type runOutcome struct {
	exitCode  int // -1 when killed
	timedOut  bool
	cancelled bool
	duration  time.Duration
	// launch is how the sandbox started the command; launchNote why not
	// through its zygote when it could have.
	launch     sandbox.Launch
	launchNote string
	// refresh is what the sandbox changed before the command (new covers).
	refresh *sandbox.Refresh
}

// runShell runs spec.command with `shell -c` in spec.sandbox (its own
// process group, and with the sandbox's layers its own namespaces or
// Landlock domain) with stdin closed (/dev/null). On timeout or when ctx is
// cancelled everything it started is killed; after the shell exits,
// whatever it left running is killed too (sandbox.Process.Wait). Output (stdout and
// stderr interleaved) goes to spec.out through one pipe that is drained for
// at most pipeDrainDelay after the kill. A non-nil error means the command
// could not be started; errors.Is(err, sandbox.ErrUnavailable) when no
// sandbox could be set up.
func runShell(ctx context.Context, spec runSpec) (runOutcome, error) {
	runCtx, cancel := context.WithTimeoutCause(ctx, spec.timeout, errTimedOut)
	defer cancel()
	pr, pw, err := os.Pipe()
	if err != nil {
		return runOutcome{}, fmt.Errorf("bash: pipe: %w", err)
	}
	defer pr.Close()
	sb := spec.sandbox
	if sb == nil {
		if sb, err = sandbox.New(sandbox.Policy{Mode: sandbox.ModeOff}); err != nil {
			pw.Close()
			return runOutcome{}, fmt.Errorf("bash: %w", err)
		}
	}
	start := time.Now()
	proc, err := sb.Start(runCtx, []string{spec.shell, "-c", spec.command}, spec.dir, spec.env, sandbox.Stdio{Stdout: pw, Stderr: pw})
	pw.Close() // the command holds the write end now
	if err != nil {
		return runOutcome{}, fmt.Errorf("bash: %w", err)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(buf)
		_, _ = io.CopyBuffer(spec.out, struct{ io.Reader }{pr}, *buf) // the struct hides WriteTo, which would allocate its own
	}()
	code, waitErr := proc.Wait() // everything the command started is gone by now
	select {
	case <-copied:
	case <-time.After(pipeDrainDelay):
		pr.Close() // unblocks the copy
		<-copied
	}
	out := runOutcome{exitCode: code, duration: time.Since(start), launch: proc.Launch(), launchNote: proc.Note(), refresh: proc.Refresh()}
	switch {
	case ctx.Err() != nil:
		out.cancelled = true
	case errors.Is(context.Cause(runCtx), errTimedOut):
		out.timedOut = true
	}
	if waitErr != nil && !out.cancelled && !out.timedOut {
		return out, fmt.Errorf("bash: %w", waitErr)
	}
	return out, nil
}
