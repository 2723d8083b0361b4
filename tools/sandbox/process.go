package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Launch says how a sandboxed command was started.
type Launch string

// Launches.
const (
	// LaunchZygote: forked by the run's zygote, the one helper that set
	// the sandbox up once (the default; with mode off, a zygote that is
	// only the reaper).
	LaunchZygote Launch = "zygote"
	// LaunchHelper: a helper of its own set the sandbox up for this
	// command alone (Command; the fallback when no zygote can start).
	LaunchHelper Launch = "helper"
	// LaunchDirect: mode off without a helper, a plain process group.
	LaunchDirect Launch = "direct"
)

// Stdio are a command's standard input, output and error; a nil entry is
// /dev/null. The caller keeps (and closes) its files: Start duplicates
// what it passes on.
type Stdio struct{ Stdin, Stdout, Stderr *os.File }

// Process is a command started by Start.
type Process struct {
	launch  Launch
	note    string   // why a helper of its own was used (the zygote failed)
	refresh *Refresh // what the sandbox changed before this command
	cmd     *exec.Cmd
	code    int
	err     error
	once    sync.Once
	wait    func() (int, error)
}

// Launch says how the command was started.
func (p *Process) Launch() Launch { return p.launch }

// Note is why the command did not go through the zygote when it could
// have ("" when it did, or when the sandbox is off or pinned to helpers).
func (p *Process) Note() string { return p.note }

// Refresh is what the sandbox changed before this command (new covers
// for protected files that appeared, a new zygote), nil when nothing.
func (p *Process) Refresh() *Refresh { return p.refresh }

// Wait waits for the command and returns its exit code: -1 when it was
// killed by a signal (as os.ProcessState.ExitCode). By then everything it
// started is gone: the sandbox kills what a command leaves running when
// it exits. The error is non-nil only when the command's end could not be
// learnt (its zygote or helper vanished). Wait may be called more than once.
func (p *Process) Wait() (int, error) {
	p.once.Do(func() { p.code, p.err = p.wait() })
	return p.code, p.err
}

// Start starts argv (argv[0] looked up in env's PATH) in dir with env
// inside the sandbox, with stdio; env gets HOME, TMPDIR and
// GIT_CONFIG_GLOBAL pointed at the sandbox's own as in Command. The first
// Start of a sandbox with layers starts its zygote; each later one is a
// fork and exec in the zygote (one command at a time per zygote: a command
// started while another runs gets a zygote of its own, kept for reuse).
// When no zygote can start, the command gets a helper of its own
// (Command), and Process.Note says why. Cancelling ctx kills the command
// and everything it started. It fails with ErrUnavailable when auto found
// no layer.
func (s *Sandbox) Start(ctx context.Context, argv []string, dir string, env []string, stdio Stdio) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if s.unavail != nil {
		return nil, s.unavail
	}
	var note string
	ref := s.refresh()
	switch {
	case s.perCommand:
	case s.mode != ModeOff:
		p, err := s.startInZygote(ctx, argv, dir, s.commandEnv(env), stdio)
		if err == nil {
			p.refresh = ref
			return p, nil
		}
		note = err.Error()
	case reaperAvailable() && mainCalled.Load():
		// mode off: a zygote with no layer, only the reaper (offCommand),
		// and the command's environment as given
		p, err := s.startInZygote(ctx, argv, dir, s.offEnv(env), stdio)
		if err == nil {
			return p, nil
		}
		note = err.Error()
	}
	cmd, err := s.Command(ctx, argv, dir, env)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = orNil(stdio.Stdin), orNil(stdio.Stdout), orNil(stdio.Stderr)
	if err := startMapped(cmd); err != nil {
		return nil, fmt.Errorf("sandbox: start %s: %w", argv[0], err)
	}
	p := &Process{launch: LaunchHelper, note: note, cmd: cmd, refresh: ref}
	if s.mode == ModeOff && cmd.Args[0] != reaperName {
		p.launch = LaunchDirect
	}
	p.wait = func() (int, error) {
		err := cmd.Wait()
		_ = killGroup(cmd.Process.Pid, syscall.SIGKILL) // leftovers in the group: background jobs
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
			return -1, fmt.Errorf("sandbox: wait: %w", err)
		}
		return cmd.ProcessState.ExitCode(), nil
	}
	return p, nil
}

// orNil keeps a nil *os.File a nil interface (exec.Cmd then uses
// /dev/null).
func orNil(f *os.File) interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
} {
	if f == nil {
		return nil
	}
	return f
}
