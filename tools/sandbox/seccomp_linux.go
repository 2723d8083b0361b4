package sandbox

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// filterRules is what the seccomp filter refuses besides sysRefused,
// foreign ABIs and TIOCSTI/TIOCLINUX.
type filterRules struct {
	// families, when not nil, are the only socket(2) domains allowed;
	// others fail with EACCES.
	families []uint32
	// tcpOnly allows AF_INET and AF_INET6 sockets of SOCK_STREAM with
	// protocol 0 or IPPROTO_TCP (no UDP, raw or MPTCP: Landlock's TCP
	// rules are what bounds them), when families is set.
	tcpOnly bool
	// noConnect fails connect(2) with EACCES: with Landlock only below
	// ABI 9 nothing else stops a command from reaching a daemon's unix
	// socket (Docker's, the session bus).
	noConnect bool
	// guard, when not empty, are processes no command may signal, limit
	// or open a pidfd of (Landlock only: the zygote or helper, the runner
	// and its ancestors); groups are their process groups, which kill(2)
	// may not reach either, nor every process at once (pid -1). See
	// guardRules.
	guard, groups []uint32
	// noSendto fails sendto(2) with an address with EACCES (a datagram
	// to a daemon's socket).
	noSendto bool
}

// rulesFor is the filter for a sandbox: without network, only unix and
// netlink sockets (plus inet ones inside the empty network namespace:
// loopback only); with Landlock alone and no network, no connect either.
// AF_VSOCK, AF_PACKET and the rest are refused in both layers: vsock is
// not bound by a network namespace.
//
// With Landlock alone and the allow list's proxy (proxy), TCP sockets are
// allowed and so is connect(2): Landlock (ABI ≥ 4) lets them reach the
// forwarder's port only; sendto(2) with an address stays refused.
func rulesFor(ns, network, proxy bool) filterRules {
	switch {
	case network:
		return filterRules{}
	case ns:
		return filterRules{families: []uint32{unix.AF_UNIX, unix.AF_NETLINK, unix.AF_INET, unix.AF_INET6}}
	case proxy:
		return filterRules{families: []uint32{unix.AF_UNIX, unix.AF_NETLINK}, tcpOnly: true, noSendto: true}
	}
	return filterRules{families: []uint32{unix.AF_UNIX, unix.AF_NETLINK}, noConnect: true, noSendto: true}
}

// maxGuarded bounds the processes a filter guards (the jump offsets of a
// BPF block are 8 bits).
const maxGuarded = 32

// guarded returns this process and its ancestors (up to maxGuarded, init
// excluded) and their process groups: what a command under Landlock alone
// must not be able to signal. Without a PID namespace a command shares
// the zygote's Landlock domain (signals inside a domain are not scoped),
// and below Landlock ABI 6 (GitHub's ubuntu-24.04 has ABI 4) signals
// are not scoped at all: a command could kill its zygote, whose orphans
// then outlive the run, or the runner itself, which then leaves no final
// record, or the CI agent that started it.
func guarded() (pids, groups []uint32) {
	seen := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && len(pids) < maxGuarded && !seen[pid]; pid = parentOf(pid) {
		seen[pid] = true
		pids = append(pids, uint32(pid))
		if g, err := unix.Getpgid(pid); err == nil && g > 1 && !slices.Contains(groups, uint32(g)) && len(groups) < maxGuarded {
			groups = append(groups, uint32(g))
		}
	}
	return pids, groups
}

// parentOf is pid's parent from /proc/<pid>/stat (0 when unknown).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// BPF instruction classes the filter uses.
const (
	bpfLd   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
)

// Verdicts.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
)

// Offsets in struct seccomp_data: nr 0, arch 4, args[i] 16+8i (the low
// word on little endian, the only ABIs with a filter).
const (
	offNr   = 0
	offArch = 4
)

func offArg(i, high uint32) uint32 { return 16 + 8*i + 4*high }

// buildFilter compiles rules into a BPF program: each judged syscall is a
// block "A = nr; if A != nr skip the body; body (ends in a return)".
func buildFilter(r filterRules) []unix.SockFilter {
	prog := []unix.SockFilter{
		{Code: bpfLd, K: offArch},
		{Code: bpfJeq, K: seccompArch, Jt: 1},
		{Code: bpfRet, K: retENOSYS}, // a foreign ABI (i386 socketcall on amd64)
		{Code: bpfLd, K: offNr},
		{Code: bpfJge, K: 0x40000000, Jf: 1},
		{Code: bpfRet, K: retENOSYS}, // x32
	}
	block := func(nr uint32, body ...unix.SockFilter) {
		prog = append(prog, unix.SockFilter{Code: bpfLd, K: offNr}, unix.SockFilter{Code: bpfJeq, K: nr, Jf: uint8(len(body))})
		prog = append(prog, body...)
	}
	for _, nr := range sysRefused {
		block(nr, unix.SockFilter{Code: bpfRet, K: retENOSYS})
	}
	// TIOCSTI and TIOCLINUX push input into a terminal: into the shell the
	// runner was started from, to run after it exits.
	block(sysIoctl,
		unix.SockFilter{Code: bpfLd, K: offArg(1, 0)},
		unix.SockFilter{Code: bpfJeq, K: unix.TIOCSTI, Jt: 2},
		unix.SockFilter{Code: bpfJeq, K: unix.TIOCLINUX, Jt: 1},
		unix.SockFilter{Code: bpfRet, K: retAllow},
		unix.SockFilter{Code: bpfRet, K: retEPERM})
	if r.families != nil {
		block(sysSocket, socketBody(r)...)
	}
	if r.noConnect {
		block(sysConnect, unix.SockFilter{Code: bpfRet, K: retEACCES})
	}
	if r.noSendto {
		block(sysSendto, // an address (args[4] not NULL) is a connect
			unix.SockFilter{Code: bpfLd, K: offArg(4, 0)},
			unix.SockFilter{Code: bpfJeq, K: 0, Jf: 3},
			unix.SockFilter{Code: bpfLd, K: offArg(4, 1)},
			unix.SockFilter{Code: bpfJeq, K: 0, Jf: 1},
			unix.SockFilter{Code: bpfRet, K: retAllow},
			unix.SockFilter{Code: bpfRet, K: retEACCES})
	}
	modeRules(block)
	guardRules(r, block)
	return append(prog, unix.SockFilter{Code: bpfRet, K: retAllow})
}

// modeArg is a syscall that sets a file's mode and the index of the mode
// argument.
type modeArg struct{ nr, arg uint32 }

// modeRules appends the blocks that fail with EPERM every chmod, open,
// creat and mknod whose mode has the setuid or setgid bit: a file the
// command makes setuid keeps the bit after the run, where no_new_privs no
// longer applies, and with the runner as root (uid 0 in the user
// namespace is root outside) that is root for any local user: in the work
// tree, or anywhere outside it with Landlock only, which has no right for
// chmod (chmod u+s /usr/bin/python3 worked).
func modeRules(block func(uint32, ...unix.SockFilter)) {
	for _, m := range sysModes {
		block(m.nr,
			unix.SockFilter{Code: bpfLd, K: offArg(m.arg, 0)},
			unix.SockFilter{Code: bpfJset, K: unix.S_ISUID | unix.S_ISGID, Jt: 1},
			unix.SockFilter{Code: bpfRet, K: retAllow},
			unix.SockFilter{Code: bpfRet, K: retEPERM})
	}
}

// guardRules appends the blocks that keep r.guard's processes out of a
// command's reach (EPERM): kill of one of them, of one of r.groups, or of
// every process (-1); tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,
// pidfd_open and prlimit64 (a CPU limit of 0 kills) aimed at one of them;
// tkill of any thread (a thread id names no process: the guarded ones'
// threads are unknown); pidfd_send_signal fails with ENOSYS (its
// descriptor may be a /proc/<pid> directory, which the filter cannot
// see), so Go and others fall back to kill(2). Each pid is an int
// argument: its low word is what the kernel uses. The guarded processes
// themselves only signal their commands (the Go runtime's preemption
// signals to its own threads fail, and preemption falls back to its
// cooperative points).
func guardRules(r filterRules, block func(uint32, ...unix.SockFilter)) {
	if len(r.guard) == 0 {
		return
	}
	refuse := func(vals []uint32) []unix.SockFilter {
		body := []unix.SockFilter{{Code: bpfLd, K: offArg(0, 0)}}
		for i, v := range vals {
			body = append(body, unix.SockFilter{Code: bpfJeq, K: v, Jt: uint8(len(vals) - i)})
		}
		return append(body, unix.SockFilter{Code: bpfRet, K: retAllow}, unix.SockFilter{Code: bpfRet, K: retEPERM})
	}
	killed := append([]uint32{0xffffffff}, r.guard...)
	for _, g := range r.groups {
		killed = append(killed, uint32(-int32(g)))
	}
	block(sysKill, refuse(killed)...)
	for _, nr := range []uint32{sysTgkill, sysRtSigqueueinfo, sysRtTgsigqueueinfo, sysPidfdOpen, sysPrlimit64} {
		block(nr, refuse(r.guard)...)
	}
	block(sysTkill, unix.SockFilter{Code: bpfRet, K: retEPERM})
	block(sysPidfdSendSignal, unix.SockFilter{Code: bpfRet, K: retENOSYS})
}

// socketBody judges socket(2): the families allowed, and with tcpOnly
// inet and inet6 of type SOCK_STREAM (flags masked) with protocol 0 or
// IPPROTO_TCP; every other socket fails with EACCES.
func socketBody(r filterRules) []unix.SockFilter {
	k := len(r.families)
	body := []unix.SockFilter{{Code: bpfLd, K: offArg(0, 0)}}
	tcp := []unix.SockFilter{ // reached by the inet jumps below
		{Code: bpfLd, K: offArg(1, 0)},
		{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: 0xf}, // SOCK_NONBLOCK and SOCK_CLOEXEC off
		{Code: bpfJeq, K: unix.SOCK_STREAM, Jf: 3},
		{Code: bpfLd, K: offArg(2, 0)},
		{Code: bpfJeq, K: 0, Jt: 2},
		{Code: bpfJeq, K: unix.IPPROTO_TCP, Jt: 1},
		{Code: bpfRet, K: retEACCES},
		{Code: bpfRet, K: retAllow},
	}
	inet := 0
	if r.tcpOnly {
		inet = 2
	}
	// after the k+inet jumps: deny, allow, then the tcp part
	for i, f := range r.families {
		body = append(body, unix.SockFilter{Code: bpfJeq, K: f, Jt: uint8(k + inet - i)})
	}
	if r.tcpOnly {
		body = append(body, unix.SockFilter{Code: bpfJeq, K: unix.AF_INET, Jt: 3}, unix.SockFilter{Code: bpfJeq, K: unix.AF_INET6, Jt: 2})
	}
	body = append(body, unix.SockFilter{Code: bpfRet, K: retEACCES}, unix.SockFilter{Code: bpfRet, K: retAllow})
	if r.tcpOnly {
		body = append(body, tcp...)
	}
	return body
}

// installFilter installs the filter for rules on every thread of this
// process (inherited by all it starts), after PR_SET_NO_NEW_PRIVS (a
// setuid program then gains nothing). It is the network layer where there
// is no network namespace (Landlock before ABI 10 does not cover UDP, and
// no ABI covers MPTCP) and closes what namespaces do not: vsock, io_uring,
// keyrings, terminal injection.
func installFilter(r filterRules) error {
	prog := buildFilter(r)
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
