//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os/exec"
	"sync/atomic"
	"syscall"
)

// mainCalled is set by Main (see the Linux build).
var mainCalled atomic.Bool

// Main marks the process as able to start the helper; off Linux there is
// no helper and it only returns.
func Main() { mainCalled.Store(true) }

// Probe reports that no layer exists off Linux: bash and checks are
// refused unless the spec says sandbox.mode: off.
func Probe() Support {
	err := errors.New("the OS sandbox exists on Linux only")
	return Support{Namespaces: err, Landlock: err}
}

// reaperAvailable is false off Linux: no helper, mode-off commands are
// plain process groups.
func reaperAvailable() bool { return false }

func sysProcAttr([]Layer, bool) (*syscall.SysProcAttr, syscall.Signal) {
	return &syscall.SysProcAttr{Setpgid: true}, syscall.SIGKILL
}

// zygotePool is empty off Linux: there is no zygote.
type zygotePool struct{}

func (zygotePool) close() {}

func (s *Sandbox) startInZygote(context.Context, []string, string, []string, Stdio) (*Process, error) {
	return nil, errors.New("the zygote exists on Linux only")
}

func listeningSockets() []string { return nil }

func (zygotePool) retire() {}

// coverWatch does not exist off Linux (there is no sandbox to refresh).
type coverWatch struct{}

func newCoverWatch(string, func(string) bool) (*coverWatch, []string, error) {
	return nil, nil, errors.New("watching for protected files exists on Linux only")
}

func (*coverWatch) take() ([]string, string) { return nil, "" }

func (*coverWatch) close() {}

func startMapped(cmd *exec.Cmd) error { return cmd.Start() }
