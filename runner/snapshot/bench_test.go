package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSnapshot compares this package with the git CLI recipe
// OpenCode uses (a private GIT_DIR, `GIT_INDEX_FILE=… git add -A && git
// write-tree`) on the same trees in the same run:
//
//	go test -run '^$' -bench Snapshot -benchtime 3x ./runner/snapshot/
//
// Trees: "generated" (25,000 files) and "gomod" (a module from the Go
// module cache, SNAPSHOT_BENCH_MODULE, default github.com/go-git/go-git/v5@v5.19.3),
// each committed into a fresh repository. peak-RSS-MB is the peak resident
// memory during one operation: the process high-water mark (reset through
// /proc/self/clear_refs) for go-git, the largest child's ru_maxrss for git.
func BenchmarkSnapshot(b *testing.B) {
	out, err := exec.CommandContext(b.Context(), "go", "env", "GOMODCACHE").Output()
	if err != nil {
		b.Fatal(err)
	}
	modCache := strings.TrimSpace(string(out))
	isolateGit(b)
	b.Run("generated", func(b *testing.B) {
		wt := b.TempDir()
		generateTree(b, wt, 25000)
		benchTree(b, wt)
	})
	b.Run("gomod", func(b *testing.B) {
		mod := os.Getenv("SNAPSHOT_BENCH_MODULE")
		if mod == "" {
			mod = "github.com/go-git/go-git/v5@v5.19.3"
		}
		wt := b.TempDir()
		copyTree(b, filepath.Join(modCache, mod), wt)
		// A tree at rest, as a checkout is when a run starts: files whose
		// mtime or ctime is within racyWindow of a scan are re-hashed on
		// every Track (and ctime cannot be set back), so a just-copied
		// small tree would measure the racy path, not the stat cache.
		time.Sleep(time.Duration(racyWindow) + 100*time.Millisecond)
		benchTree(b, wt)
	})
}

// generateTree writes n text files of 0.5-8 KiB in 25×20 directories.
func generateTree(b *testing.B, root string, n int) { b.Helper(); generateTreeT(b, root, n) }

func generateTreeT(b testing.TB, root string, n int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789\n")
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%25), fmt.Sprintf("s%02d", (i/25)%20), fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "file %d\n", i)
		for range 8 + r.IntN(140) {
			buf.Write(line)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func copyTree(b *testing.B, src, dst string) {
	b.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(t, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(t, data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
}

func benchTree(b *testing.B, wt string) {
	b.Helper()
	git(b, wt, nil, "init", "-q", "-b", "main")
	git(b, wt, nil, "add", "-A")
	git(b, wt, nil, "commit", "-q", "-m", "base")
	git(b, wt, nil, "status", "--porcelain") // refresh the index as a user's would be
	files := splitZ(git(b, wt, nil, "ls-files", "-z"))
	b.Logf("%s: %d files", filepath.Base(wt), len(files))
	edit := files[len(files)/2]
	three := []string{files[1], files[len(files)/3], files[len(files)-2]}

	b.Run("first-with-index/gogit", func(b *testing.B) { benchFirst(b, wt, true) })
	b.Run("first-with-index/git", func(b *testing.B) { benchGitFirst(b, wt, true) })
	b.Run("first-no-index/gogit", func(b *testing.B) { benchFirst(b, wt, false) })
	b.Run("first-no-index/git", func(b *testing.B) { benchGitFirst(b, wt, false) })
	b.Run("nochange/gogit", func(b *testing.B) { benchNoChange(b, wt) })
	b.Run("nochange/git", func(b *testing.B) { benchGitNoChange(b, wt) })
	b.Run("edit1/gogit", func(b *testing.B) { benchEdit(b, wt, edit) })
	b.Run("edit1/git", func(b *testing.B) { benchGitEdit(b, wt, edit) })
	b.Run("patch3/gogit", func(b *testing.B) { benchPatch(b, wt, three, false) })
	b.Run("patch3/git", func(b *testing.B) { benchPatch(b, wt, three, true) })
}

// withoutIndex hides the user's index for the duration of fn.
func withoutIndex(b *testing.B, wt string, fn func()) {
	b.Helper()
	idx := filepath.Join(wt, ".git", "index")
	if err := os.Rename(idx, idx+".hidden"); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := os.Rename(idx+".hidden", idx); err != nil {
			b.Fatal(err)
		}
	}()
	fn()
}

func benchFirst(b *testing.B, wt string, withIndex bool) {
	b.Helper()
	run := func() {
		var peak float64
		for b.Loop() {
			b.StopTimer()
			dir := filepath.Join(b.TempDir(), "store")
			b.StartTimer()
			peak = max(peak, peakRSS(b, func() {
				s, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Track(context.Background()); err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}))
		}
		b.ReportMetric(peak, "peak-RSS-MB")
	}
	if withIndex {
		run()
	} else {
		withoutIndex(b, wt, run)
	}
}

// gitStore is OpenCode's snapshot recipe: a bare GIT_DIR outside the work
// tree and its own index file.
type gitStore struct {
	env  []string
	peak float64
}

func newGitStore(b *testing.B, wt string, seedIndex bool) *gitStore {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "git-store")
	git(b, wt, nil, "init", "-q", "--bare", dir)
	g := &gitStore{env: []string{"GIT_DIR=" + dir, "GIT_WORK_TREE=" + wt, "GIT_INDEX_FILE=" + filepath.Join(dir, "index")}}
	if seedIndex {
		data, err := os.ReadFile(filepath.Join(wt, ".git", "index"))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "index"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		alt := filepath.Join(wt, ".git", "objects") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(alt), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return g
}

func (g *gitStore) run(b *testing.B, wt string, stdout io.Writer, args ...string) {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), "/usr/bin/git", args...)
	cmd.Dir, cmd.Env, cmd.Stdout = wt, append(os.Environ(), g.env...), stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		g.peak = max(g.peak, float64(ru.Maxrss)/1024)
	}
}

func (g *gitStore) track(b *testing.B, wt string) string {
	b.Helper()
	g.run(b, wt, nil, "add", "-A")
	var out bytes.Buffer
	g.run(b, wt, &out, "write-tree")
	return strings.TrimSpace(out.String())
}

func benchGitFirst(b *testing.B, wt string, withIndex bool) {
	b.Helper()
	run := func() {
		var peak float64
		for b.Loop() {
			b.StopTimer()
			g := newGitStore(b, wt, withIndex)
			b.StartTimer()
			g.track(b, wt)
			peak = max(peak, g.peak)
		}
		b.ReportMetric(peak, "peak-RSS-MB")
	}
	if withIndex {
		run()
	} else {
		withoutIndex(b, wt, run)
	}
}

func benchNoChange(b *testing.B, wt string) {
	b.Helper()
	s := openBenchStore(b, wt)
	var peak float64
	for b.Loop() {
		peak = max(peak, peakRSS(b, func() {
			if _, err := s.Track(context.Background()); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(peak, "peak-RSS-MB")
}

func openBenchStore(b *testing.B, wt string) *Store {
	b.Helper()
	s, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: filepath.Join(b.TempDir(), "store")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if _, err := s.Track(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchGitNoChange(b *testing.B, wt string) {
	b.Helper()
	g := newGitStore(b, wt, true)
	g.track(b, wt)
	g.peak = 0
	for b.Loop() {
		g.track(b, wt)
	}
	b.ReportMetric(g.peak, "peak-RSS-MB")
}

func appendLine(b *testing.B, p string, i int) {
	b.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(f, "edit %d\n", i)
	f.Close()
}

func benchEdit(b *testing.B, wt, rel string) {
	b.Helper()
	s := openBenchStore(b, wt)
	var peak float64
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		appendLine(b, filepath.Join(wt, rel), i)
		b.StartTimer()
		peak = max(peak, peakRSS(b, func() {
			if _, err := s.TrackPaths(context.Background(), []string{rel}); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(peak, "peak-RSS-MB")
}

func benchGitEdit(b *testing.B, wt, rel string) {
	b.Helper()
	g := newGitStore(b, wt, true)
	g.track(b, wt)
	g.peak = 0
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		appendLine(b, filepath.Join(wt, rel), 1000+i)
		b.StartTimer()
		g.track(b, wt)
	}
	b.ReportMetric(g.peak, "peak-RSS-MB")
}

// benchPatch diffs two snapshots that differ in three files, with this
// package or with `git diff` on the same store.
func benchPatch(b *testing.B, wt string, rels []string, useGit bool) {
	b.Helper()
	s := openBenchStore(b, wt)
	from, err := s.Track(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for i, rel := range rels {
		appendLine(b, filepath.Join(wt, rel), 5000+i)
	}
	to, err := s.TrackPaths(context.Background(), rels)
	if err != nil {
		b.Fatal(err)
	}
	g := &gitStore{env: []string{"GIT_DIR=" + s.storeDir}}
	var peak float64
	for b.Loop() {
		if useGit {
			g.run(b, wt, io.Discard, "diff", "--binary", string(from), string(to))
			continue
		}
		peak = max(peak, peakRSS(b, func() {
			if _, err := s.Patch(context.Background(), from, to, io.Discard); err != nil {
				b.Fatal(err)
			}
		}))
	}
	if useGit {
		peak = g.peak
	}
	b.ReportMetric(peak, "peak-RSS-MB")
}

// peakRSS runs fn and returns the process's peak resident set in MiB
// during it, after resetting the high-water mark (Linux only; 0 elsewhere).
func peakRSS(b *testing.B, fn func()) float64 {
	b.Helper()
	b.StopTimer()
	runtime.GC()
	debug.FreeOSMemory()
	reset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	b.StartTimer()
	fn()
	if !reset {
		return 0
	}
	b.StopTimer()
	defer b.StartTimer()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
