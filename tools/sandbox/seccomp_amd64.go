//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The native syscall ABI the seccomp filter admits.
const (
	seccompArch     = unix.AUDIT_ARCH_X86_64
	sysSocket       = unix.SYS_SOCKET
	sysIoUringSetup = unix.SYS_IO_URING_SETUP
)
