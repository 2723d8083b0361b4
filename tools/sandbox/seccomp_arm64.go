//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The native syscall ABI the seccomp filter admits, and the syscalls it
// judges.
const (
	seccompArch = unix.AUDIT_ARCH_AARCH64
	sysSocket   = unix.SYS_SOCKET
	sysConnect  = unix.SYS_CONNECT
	sysSendto   = unix.SYS_SENDTO
	sysIoctl    = unix.SYS_IOCTL

	sysKill             = unix.SYS_KILL
	sysTkill            = unix.SYS_TKILL
	sysTgkill           = unix.SYS_TGKILL
	sysRtSigqueueinfo   = unix.SYS_RT_SIGQUEUEINFO
	sysRtTgsigqueueinfo = unix.SYS_RT_TGSIGQUEUEINFO
	sysPidfdOpen        = unix.SYS_PIDFD_OPEN
	sysPidfdSendSignal  = unix.SYS_PIDFD_SEND_SIGNAL
	sysPrlimit64        = unix.SYS_PRLIMIT64
)

// sysRefused are the syscalls the filter fails with ENOSYS: io_uring
// (its operations open sockets and files past the socket filter), the
// key management calls (the user's keyrings are shared with the runner:
// the user namespace keeps its uid) and openat2 (its mode is in a struct
// the filter cannot read; callers fall back to openat on ENOSYS).
var sysRefused = []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_OPENAT2}

// sysModes are the syscalls that set a file's mode, with the index of
// their mode argument: a mode with the setuid or setgid bit fails (see
// modeRules).
var sysModes = []modeArg{{unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}, {unix.SYS_FCHMODAT2, 2}, {unix.SYS_OPENAT, 3}, {unix.SYS_MKNODAT, 2}}
