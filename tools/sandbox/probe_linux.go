package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// mainCalled is set by Main: New refuses to build a sandbox whose helper
// (a re-exec of this binary) would not start as one. It is the package's
// one mutable variable, a fact about the process, not configuration.
var mainCalled atomic.Bool

// probeOnce caches Probe: what the kernel offers does not change while
// the process runs.
var probeOnce = sync.OnceValue(probe)

// Probe reports which layers this machine offers. The namespace probe
// starts the helper once in the namespaces a command gets (user, mount,
// PID, network, IPC, UTS) and has it mount /proc and bring up loopback,
// so that an AppArmor or sysctl restriction shows here, not at the first
// command. The result is computed once per process.
func Probe() Support { return probeOnce() }

func probe() Support {
	var s Support
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case err != nil:
		s.Landlock = fmt.Errorf("the kernel has no Landlock (%v)", err)
	case abi < 1:
		s.Landlock = errors.New("the kernel has no Landlock")
	case seccompArch == 0:
		s.Landlock = errors.New("no seccomp network filter for this CPU architecture")
	default:
		s.LandlockABI = abi
	}
	s.Namespaces = probeNamespaces()
	return s
}

// probeNamespaces starts the helper in probe mode.
func probeNamespaces() error {
	if !mainCalled.Load() {
		return errors.New("sandbox.Main was not called in main()")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	conf, _ := json.Marshal(helperConfig{Layers: []Layer{LayerNamespaces}, Probe: true})
	cmd := exec.Command(exe, helperArg, string(conf), "true") //nolint:noctx // a probe run once at start that exits at once; it has no caller context
	cmd.Args[0] = "runner-sandbox-probe"
	cmd.SysProcAttr, _ = sysProcAttr([]Layer{LayerNamespaces}, false)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = startMapped(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%v: %s", err, msg)
		}
		return err
	}
	return nil
}

// sysProcAttr is how the runner starts the helper for layers, and the
// signal that cancels it: with namespaces, SIGKILL (the helper is the PID
// namespace's init: the kernel kills the rest); with Landlock only,
// SIGTERM (the helper kills its descendants, then exits). Either way the
// helper gets that signal when the runner dies (PR_SET_PDEATHSIG) and is
// its own process group.
func sysProcAttr(layers []Layer, network bool) (*syscall.SysProcAttr, syscall.Signal) {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	for _, l := range layers {
		if l != LayerNamespaces {
			continue
		}
		flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
		if !network {
			flags |= unix.CLONE_NEWNET
		}
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags = flags
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		if uid != 0 {
			// A non-root uid keeps no capability across the helper's exec,
			// even in its own user namespace: the ones the helper's set-up
			// needs are passed as ambient capabilities (dropCapabilities
			// clears them all before the command runs).
			attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_SYS_CHROOT}
		}
		attr.Pdeathsig = syscall.SIGKILL
		return attr, syscall.SIGKILL
	}
	return attr, syscall.SIGTERM
}

// dumpableMu serialises the runner's dumpable flag while a helper in a
// new user namespace starts (startMapped): the flag is the process's, one
// for all goroutines.
var dumpableMu sync.Mutex //nolint:gochecknoglobals // guards a process-wide attribute (prctl PR_SET_DUMPABLE)

// startMapped starts cmd. When it clones a new user namespace and the
// runner is not root, the runner is dumpable while it starts: Main turned
// PR_SET_DUMPABLE off, the child inherits that until it execs, which makes
// its /proc/<pid>/uid_map root's, and the runner (the parent, which
// writes the map) could not open it: "fork/exec …: permission denied",
// and the namespaces layer was unavailable to every non-root runner
// (auto then fell back to Landlock only). The flag is off again once the
// helper runs (exec.Cmd.Start returns after the child's exec). Commands
// cannot use the window: with namespaces they do not see the runner (own
// PID namespace); other layers take no user namespace.
func startMapped(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Cloneflags&unix.CLONE_NEWUSER == 0 || os.Geteuid() == 0 {
		return cmd.Start()
	}
	dumpableMu.Lock()
	defer dumpableMu.Unlock()
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	defer func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }()
	return cmd.Start()
}
