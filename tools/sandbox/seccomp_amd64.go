//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The native syscall ABI the seccomp filter admits, and the syscalls it
// judges.
const (
	seccompArch = unix.AUDIT_ARCH_X86_64
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
// (its operations open sockets and files past the socket filter) and the
// key management calls (the user's keyrings are shared with the runner:
// the user namespace keeps its uid).
var sysRefused = []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY}
