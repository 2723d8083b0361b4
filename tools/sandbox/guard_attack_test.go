package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// signalAttacks are the ways a process reaches another one to end it,
// each aimed at a target pid (the attack's own child as the control, its
// parent as the attack: the zygote or the helper). Under Landlock alone
// the parent shares the command's Landlock domain (signals within one are
// not scoped) and below ABI 6 nothing scopes signals: only the seccomp
// guard stands between a command and its zygote, the runner and the CI
// agent above them.
var signalAttacks = map[string]func(target int) error{
	"kill":   func(pid int) error { return unix.Kill(pid, unix.SIGKILL) },
	"killpg": func(pid int) error { return unix.Kill(-pgidOf(pid), unix.SIGKILL) },
	"tgkill": func(pid int) error { return unix.Tgkill(pid, pid, unix.SIGKILL) },
	"tkill": func(pid int) error {
		_, _, e := unix.Syscall(unix.SYS_TKILL, uintptr(pid), uintptr(unix.SIGKILL), 0)
		return errnoErr(e)
	},
	"sigqueue": func(pid int) error {
		var info [128]byte // siginfo_t: signo, errno, code (SI_QUEUE)
		*(*int32)(unsafe.Pointer(&info[0])) = int32(unix.SIGKILL)
		*(*int32)(unsafe.Pointer(&info[8])) = -1
		_, _, e := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(unix.SIGKILL), uintptr(unsafe.Pointer(&info[0])))
		return errnoErr(e)
	},
	"pidfd": func(pid int) error {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	},
	// a /proc/<pid> directory is a pidfd to pidfd_send_signal too
	"pidfd-proc": func(pid int) error {
		fd, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_DIRECTORY|unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	},
	// a CPU limit of 0 seconds: the kernel kills the process
	"prlimit": func(pid int) error {
		return unix.Prlimit(pid, unix.RLIMIT_CPU, &unix.Rlimit{}, nil)
	},
}

// refusedEverywhere are the calls the guard refuses whatever the target:
// their argument names no process the filter can compare.
var refusedEverywhere = []string{"tkill", "pidfd", "pidfd-proc"}

func errnoErr(e syscall.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

func pgidOf(pid int) int {
	g, err := unix.Getpgid(pid)
	if err != nil {
		return pid
	}
	return g
}

func init() {
	for name, f := range signalAttacks {
		syscallAttacks["parent-"+name] = func(string) error { return f(os.Getppid()) }
		syscallAttacks["child-"+name] = func(string) error {
			pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{
				Sys: &syscall.SysProcAttr{Setpgid: true},
			})
			if err != nil {
				return err
			}
			defer func() {
				_ = unix.Kill(pid, unix.SIGKILL)
				var ws unix.WaitStatus
				_, _ = unix.Wait4(pid, &ws, 0, nil)
			}()
			return f(pid)
		}
	}
	// every process this user has (Landlock ABI ≥ 6: the domain's)
	syscallAttacks["parent-all-kill"] = func(string) error { return unix.Kill(-1, unix.SIGKILL) }
}

// TestLandlockGuardsItsParents: under Landlock alone, a command cannot
// signal, CPU-limit or pidfd its zygote or helper by any of
// signalAttacks, nor kill every process it may (pid -1), while the same
// calls on its own child work (the control; the three calls refused
// whatever the target fail with EPERM or ENOSYS there too). The zygote
// survives: the next command runs in it.
func TestLandlockGuardsItsParents(t *testing.T) {
	layers := []sandbox.Layer{sandbox.LayerLandlock}
	requireLayers(t, layers)
	if sandbox.Probe().LandlockABI < 6 {
		// pid -1 would reach the test itself if the guard failed
		t.Skipf("Landlock ABI %d < 6: signals are not scoped here, kill(-1) is not tried", sandbox.Probe().LandlockABI)
	}
	names := []string{"all-kill"}
	for n := range signalAttacks {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if name != "all-kill" {
				worked := attackIn(t, layers, "child-"+name, "")
				if want := !slices.Contains(refusedEverywhere, name); want && len(worked) < 2 {
					t.Fatalf("the control: %s on the command's own child did not work: %q", name, worked)
				} else if !want && len(worked) > 0 {
					t.Errorf("%s on the command's own child worked (it is refused whatever the target): %q", name, worked)
				}
			}
			sb, tree := zygoteSandbox(t, layers)
			if _, code, _ := runIn(t, t.Context(), sb, []string{"true"}, tree, pathEnv()); code != 0 {
				t.Fatal("the first command failed")
			}
			before := zygotePIDs()
			exe, _ := os.Executable()
			for launch, r := range runLaunches(t, sb, []string{exe}, tree, []string{syscallAttackEnv + "=parent-" + name}) {
				if r.ok || !strings.Contains(r.out, "refused") {
					t.Errorf("%s: %s at the parent: exit %d %q", launch, name, r.code, r.out)
				}
			}
			if after := zygotePIDs(); !slices.Equal(before, after) {
				t.Errorf("zygotes %v before the attack, %v after: it died", before, after)
			}
			out, code, launch := runIn(t, t.Context(), sb, []string{"bash", "-c", "echo next"}, tree, pathEnv())
			if out != "next\n" || code != 0 || launch != sandbox.LaunchZygote {
				t.Errorf("the next command: %q exit %d via %s", out, code, launch)
			}
		})
	}
}

// TestKilledParentLeavesNoDaemon: a command starts a daemon in a new
// session that writes into the work tree a second later, then tries to
// kill its zygote or helper (kill -9 $PPID, then its process group, read
// from /proc before the first kill: no procps needed, and the parent
// cannot have gone yet) and exits. Under every layer the daemon is gone when the command's end is
// reported: nothing is written after it, and the next command runs in the
// same zygote.
func TestKilledParentLeavesNoDaemon(t *testing.T) {
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			sb, tree := zygoteSandbox(t, layers)
			for launch, perCommand := range launchSets() {
				late := filepath.Join(tree, "late-"+launch)
				script := `(setsid bash -c 'sleep 1; echo pwned > ` + late + `' &); ` +
					`pgid=$(cut -d' ' -f5 /proc/$PPID/stat); kill -9 $PPID; kill -9 -- -$pgid; sleep 0.2; echo survived`
				var out string
				var code int
				if perCommand {
					cmd, err := sb.Command(t.Context(), []string{"bash", "-c", script}, tree, pathEnv())
					if err != nil {
						t.Fatal(err)
					}
					b, _ := cmd.CombinedOutput()
					out, code = string(b), cmd.ProcessState.ExitCode()
				} else {
					out, code, _ = runIn(t, t.Context(), sb, []string{"bash", "-c", script}, tree, pathEnv())
				}
				if !strings.Contains(out, "survived") || code != 0 {
					t.Errorf("%s: the command was ended with its parent: %q exit %d", launch, out, code)
				}
				time.Sleep(1500 * time.Millisecond)
				if _, err := os.Stat(late); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: a daemon outlived its command and wrote %s (%v)", launch, late, err)
				}
			}
		})
	}
}
