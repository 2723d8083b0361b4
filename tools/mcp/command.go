package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"syscall"
)

// DirectCommand is the CommandFunc without a sandbox: argv[0] looked up on
// the runner's PATH, env as given, in its own process group (so Close can
// kill what the server started), and on Linux killed when the runner dies
// (PR_SET_PDEATHSIG). A program that cannot be found or run is ErrConfig.
func DirectCommand(_ context.Context, server string, argv, env []string, dir string) (*exec.Cmd, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("%w: server %q: %w", ErrConfig, server, err)
	}
	cmd := exec.Command(path, argv[1:]...) //nolint:noctx // the server lives until Close stops it (TERM, then KILL of its group), not until a context ends
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = processAttrs()
	return cmd, nil
}

// startError classifies a failed process start: a missing or
// non-executable program is the task's fault.
func startError(err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return ErrConfig
	}
	return ErrStart
}

// killGroup sends SIGKILL to the process group led by pid; a group that is
// gone already is not an error.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
