//go:build !linux

package sandbox

import (
	"errors"
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

func sysProcAttr([]Layer, bool) (*syscall.SysProcAttr, syscall.Signal) {
	return &syscall.SysProcAttr{Setpgid: true}, syscall.SIGKILL
}
