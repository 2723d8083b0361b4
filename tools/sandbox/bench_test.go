package sandbox_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/sandbox"
	"github.com/seed43ef5acb/runner/tools/sandbox/netproxy"
)

// childCPU is the user+system CPU time of this process, of its waited-for
// children (helpers and their commands), and of its running zygotes with
// the commands they reaped (/proc/<pid>/stat utime, stime, cutime,
// cstime: the zygote is not waited for until the sandbox closes).
func childCPU() time.Duration {
	var self, kids syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids); err != nil {
		return 0
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(kids.Utime.Nano()+kids.Stime.Nano()+self.Utime.Nano()+self.Stime.Nano()) + zygoteCPU()
}

// zygoteCPU sums the CPU of this process's children that are zygotes.
func zygoteCPU() time.Duration {
	var ticks int64
	for _, pid := range zygotePIDs() {
		f := procStat(pid)
		if len(f) < 15 {
			continue
		}
		for _, n := range f[11:15] { // utime stime cutime cstime
			v, _ := strconv.ParseInt(n, 10, 64)
			ticks += v
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// BenchmarkCommand is the cost of one command (/bin/true) in each layer
// set, started through the run's zygote (the default: the sandbox was set
// up once) and through a helper of its own (the fallback: set up anew for
// every command), next to the same command unsandboxed (plain: fork and
// exec; off: mode off, whose commands run under a reaper) and under
// bubblewrap with the equivalent policy, in the same run. It reports wall
// time per op (ns/op) and the CPU of this process and all it started,
// zygotes included (cpu-ms/op). Goal: ≤ 5 ms. zygote-watch is the
// zygote with Policy.Protected (the work tree watched, the covers
// refreshed before each command: nothing appears); zygote-refresh makes a
// protected file before every command (a new zygote each time).
// The helper is this test binary (pipeline.BenchmarkBashStepCPU runs a
// bigger one, close to the runner's own).
func BenchmarkCommand(b *testing.B) {
	tree := b.TempDir() // below /tmp: no private /tmp for bwrap either (it would hide the tree)
	if err := os.Mkdir(filepath.Join(tree, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	env := []string{"PATH=" + os.Getenv("PATH")}
	run := func(b *testing.B, once func() error) {
		b.Helper()
		if err := once(); err != nil { // the zygote starts on the first command: not counted
			b.Fatal(err)
		}
		cpu := childCPU()
		b.ResetTimer()
		for range b.N {
			if err := once(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((childCPU()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	sets := layerSets()
	sets["off"] = nil
	for _, name := range []string{"off", "landlock", "namespaces", "both"} {
		layers := sets[name]
		for _, launch := range []string{"zygote", "helper", "zygote-watch", "zygote-refresh"} {
			if layers == nil && strings.HasPrefix(launch, "zygote-") {
				continue // mode off hides nothing
			}
			sub := name + "/" + launch
			b.Run(sub, func(b *testing.B) {
				mode := sandbox.ModeAuto
				if layers == nil {
					mode = sandbox.ModeOff
				}
				if layers != nil {
					sup := sandbox.Probe()
					for _, l := range layers {
						if sup.Namespaces != nil && l == sandbox.LayerNamespaces || sup.Landlock != nil && l == sandbox.LayerLandlock {
							b.Skipf("layer %s unavailable: %s", l, sup.Missing())
						}
					}
				}
				pol := sandbox.Policy{Mode: mode, WorkTree: tree, Layers: layers, Hidden: []string{home},
					PerCommandHelper: launch == "helper"}
				if strings.HasPrefix(launch, "zygote-") {
					pol.Protected = envProtected // watch the tree: the covers refresh before each command
				}
				sb, err := sandbox.New(pol)
				if err != nil {
					b.Fatal(err)
				}
				defer sb.Close()
				n := 0
				run(b, func() error {
					if launch == "zygote-refresh" { // a protected file appears before every command: a new zygote each time
						n++
						if err := os.WriteFile(filepath.Join(tree, fmt.Sprintf(".env.%s.%d.%d", name, time.Now().UnixNano(), n)), nil, 0o644); err != nil {
							return err
						}
					}
					p, err := sb.Start(b.Context(), []string{"/bin/true"}, tree, env, sandbox.Stdio{})
					if err != nil {
						return err
					}
					if code, err := p.Wait(); err != nil || code != 0 {
						return fmt.Errorf("exit %d %v (%s)", code, err, p.Note())
					}
					return nil
				})
			})
		}
	}
	// With the network allow list: the forwarder to the proxy runs in the
	// zygote (namespaces) or the runner (Landlock only), set up once; the
	// per-command cost must stay the zygote's.
	sock := filepath.Join(b.TempDir(), "proxy.sock")
	proxy, err := netproxy.Listen(b.Context(), sock, netproxy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer proxy.Close()
	for _, name := range []string{"landlock", "namespaces"} {
		b.Run(name+"+proxy/zygote", func(b *testing.B) {
			layers := sets[name]
			if sup := sandbox.Probe(); !slices.Contains(sup.Available(), layers[0]) {
				b.Skipf("layer %s unavailable: %s", layers[0], sup.Missing())
			}
			sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers, Hidden: []string{home}, Proxy: sock})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			run(b, func() error {
				p, err := sb.Start(b.Context(), []string{"/bin/true"}, tree, env, sandbox.Stdio{})
				if err != nil {
					return err
				}
				if code, err := p.Wait(); err != nil || code != 0 || p.Launch() != sandbox.LaunchZygote {
					return fmt.Errorf("exit %d %v via %s (%s)", code, err, p.Launch(), p.Note())
				}
				return nil
			})
		})
	}
	b.Run("plain", func(b *testing.B) { // fork and exec, no sandbox and no helper: the baseline
		run(b, func() error { return exec.CommandContext(b.Context(), "/bin/true").Run() })
	})
	b.Run("bwrap", func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("bubblewrap is not installed")
		}
		args := []string{"--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--bind", tree, tree,
			"--ro-bind", filepath.Join(tree, ".git"), filepath.Join(tree, ".git"), "--tmpfs", home,
			"--proc", "/proc", "--dev", "/dev", "--chdir", tree, "/bin/true"}
		if out, err := exec.CommandContext(b.Context(), bwrap, args...).CombinedOutput(); err != nil {
			b.Skipf("bwrap cannot run here: %v %s", err, out)
		}
		run(b, func() error { return exec.CommandContext(b.Context(), bwrap, args...).Run() })
	})
}

// procStat is /proc/<pid>/stat's fields from the third (state) on.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// zygotePIDs lists this process's children that are zygotes.
func zygotePIDs() []int {
	var out []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		argv, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(argv, []byte("runner-sandbox-zygote\x00")) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if f := procStat(pid); err == nil && len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, pid)
		}
	}
	return out
}
