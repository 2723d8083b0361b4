package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// hugeSize is the file of the bounded-memory test: 200 MB, made sparse
// (truncate), so creating it costs nothing.
const hugeSize = 200 << 20

// hugeCeiling is the peak resident memory the 200 MB case must stay
// under: half the file. Before the binary patch limit the same child
// peaked at 773 MB (both sides read whole and compressed into literals);
// with it, 13 MB.
const hugeCeiling = 100 << 20

// TestHugeBinaryBoundedMemory appends 4 bytes to a 200 MB file between two
// snapshots and writes the patch, in a child process whose peak resident
// memory (VmHWM) it reads: it must stay under hugeCeiling, the patch must
// be small and name the file as left out.
func TestHugeBinaryBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file (sparse)")
	}
	if raceEnabled {
		// The child is this binary: under the race detector hashing and
		// compressing 200 MB takes over a minute and its memory is not the
		// runner's. e2e's TestFaultHugeBinaryAppend checks the same case
		// on the real binary (built without -race) in every test run.
		t.Skip("the race detector's instrumentation makes a 200 MB child slow and its memory unrepresentative; see e2e TestFaultHugeBinaryAppend")
	}
	peak, out := runHugeChild(t, hugeSize)
	t.Logf("200 MB file, 4-byte append: peak RSS %.1f MB; %s", float64(peak)/(1<<20), out)
	if peak >= hugeCeiling {
		t.Errorf("peak RSS %d bytes, want < %d (the file is %d)", peak, hugeCeiling, hugeSize)
	}
	if !strings.Contains(out, "omitted=true") || !strings.Contains(out, "note=true") {
		t.Errorf("the change was not recorded as left out: %s", out)
	}
}

// BenchmarkHugeBinaryPeakRSS reports the peak resident memory of a
// snapshot, an append and a patch for a 2 MB and a 200 MB file (the same
// work in a child process each time): the 2 MB file is read whole for a
// delta (about 29 MB), the 200 MB one is over the binary patch limit and
// only its size is read (about 13 MB): the peak does not grow with the
// file.
func BenchmarkHugeBinaryPeakRSS(b *testing.B) {
	for _, size := range []int64{2 << 20, hugeSize} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			var peak int64
			for range b.N {
				peak, _ = runHugeChild(b, size)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
		})
	}
}

// runHugeChild runs TestHugeBinaryChild in a child test process for a
// file of size bytes and returns its VmHWM in bytes and its report line.
func runHugeChild(t testing.TB, size int64) (int64, string) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), os.Args[0], "-test.run=^TestHugeBinaryChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "SNAPSHOT_HUGE_CHILD="+t.TempDir(), "SNAPSHOT_HUGE_SIZE="+strconv.FormatInt(size, 10))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "HUGE "); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(strings.TrimPrefix(f[0], "vmhwm_kb="), 10, 64)
			if err != nil {
				t.Fatalf("child line %q: %v", line, err)
			}
			return kb << 10, rest
		}
	}
	t.Fatalf("child printed no HUGE line:\n%s", out)
	return 0, ""
}

// TestHugeBinaryChild is the child of TestHugeBinaryBoundedMemory (it
// does nothing unless SNAPSHOT_HUGE_CHILD names a directory).
func TestHugeBinaryChild(t *testing.T) {
	dir := os.Getenv("SNAPSHOT_HUGE_CHILD")
	if dir == "" {
		t.Skip("child of TestHugeBinaryBoundedMemory")
	}
	size, _ := strconv.ParseInt(os.Getenv("SNAPSHOT_HUGE_SIZE"), 10, 64)
	debug.SetMemoryLimit(32 << 20) // collect eagerly: the peak is what is live, not garbage
	ctx := context.Background()
	wt := filepath.Join(dir, "wt")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(wt, "big.bin")
	if err := os.WriteFile(big, []byte{0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, size); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, Options{WorkTree: wt, StoreDir: filepath.Join(dir, "store"), Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(big, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("tail")
	_ = f.Close()
	tree, err := s.TrackPaths(ctx, []string{"big.bin"})
	if err != nil {
		t.Fatal(err)
	}
	pf, err := os.Create(filepath.Join(dir, "changes.patch"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Patch(ctx, base, tree, pf)
	if err != nil {
		t.Fatal(err)
	}
	_ = pf.Close()
	if _, err := s.Diff(ctx, base, tree); err != nil { // what each step does
		t.Fatal(err)
	}
	patch, _ := os.ReadFile(filepath.Join(dir, "changes.patch"))
	fmt.Printf("HUGE vmhwm_kb=%d patch_bytes=%d omitted=%v note=%v\n", vmHWM(t), len(patch),
		len(files) == 1 && files[0].Omitted != nil, bytes.HasPrefix(patch, []byte("runner: ")))
}

// vmHWM is the process's peak resident set size in KiB (Linux).
func vmHWM(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	t.Skip("no VmHWM in /proc/self/status")
	return 0
}
