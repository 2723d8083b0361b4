package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// childCPU is the user+system CPU time of the waited-for children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCommand is the cost of one command (/bin/true) in each layer
// set, next to the same command unsandboxed (off) and under bubblewrap with
// the equivalent policy, in the same run. It reports wall time per op
// (ns/op) and the children's CPU (cpu-ms/op). Goal: ≤ 5 ms over off.
func BenchmarkCommand(b *testing.B) {
	tree := b.TempDir() // below /tmp: no private /tmp for bwrap either (it would hide the tree)
	if err := os.Mkdir(filepath.Join(tree, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	env := []string{"PATH=" + os.Getenv("PATH")}
	run := func(b *testing.B, mk func() *exec.Cmd) {
		b.Helper()
		cpu := childCPU()
		b.ResetTimer()
		for range b.N {
			if out, err := mk().CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
		b.ReportMetric(float64((childCPU()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	sets := layerSets()
	sets["off"] = nil
	for _, name := range []string{"off", "landlock", "namespaces", "both"} {
		layers := sets[name]
		b.Run(name, func(b *testing.B) {
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
			sb, err := sandbox.New(sandbox.Policy{Mode: mode, WorkTree: tree, Layers: layers, Hidden: []string{home}})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			run(b, func() *exec.Cmd {
				cmd, err := sb.Command(b.Context(), []string{"/bin/true"}, tree, env)
				if err != nil {
					b.Fatal(err)
				}
				return cmd
			})
		})
	}
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
		run(b, func() *exec.Cmd { return exec.CommandContext(b.Context(), bwrap, args...) })
	})
}
