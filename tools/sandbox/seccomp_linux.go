package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyInetSockets installs a seccomp filter on every thread of this
// process (inherited by all it starts) that fails socket(2) for AF_INET
// and AF_INET6 with EACCES, io_uring_setup(2) with ENOSYS (io_uring could
// open sockets past the filter), and any syscall of a foreign ABI (x32,
// i386 socketcall) with ENOSYS. It is the network layer where there is
// no network namespace: Landlock before ABI 10 does not cover UDP, and no
// ABI covers MPTCP. Unix sockets stay usable.
func denyInetSockets() error {
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
		enosy = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		eacce = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	)
	// offsets in struct seccomp_data: nr 0, arch 4, args[0] 16 (low word on little endian)
	prog := []unix.SockFilter{
		{Code: ld, K: 4},                       // 0: A = arch
		{Code: jeq, K: seccompArch, Jt: 1},     // 1: native?
		{Code: ret, K: enosy},                  // 2: foreign ABI
		{Code: ld, K: 0},                       // 3: A = nr
		{Code: jge, K: 0x40000000, Jt: 7},      // 4: x32 syscall bit → 12
		{Code: jeq, K: sysIoUringSetup, Jt: 6}, // 5: → 12
		{Code: jeq, K: sysSocket, Jt: 1},       // 6: → 8
		{Code: ret, K: allow},                  // 7
		{Code: ld, K: 16},                      // 8: A = domain
		{Code: jeq, K: unix.AF_INET, Jt: 3},    // 9: → 13
		{Code: jeq, K: unix.AF_INET6, Jt: 2},   // 10: → 13
		{Code: ret, K: allow},                  // 11
		{Code: ret, K: enosy},                  // 12
		{Code: ret, K: eacce},                  // 13
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return errno
	}
	return nil
}
