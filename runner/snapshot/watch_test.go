//go:build linux

package snapshot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func openWatched(t testing.TB, wt string, exclude ...string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: filepath.Join(t.TempDir(), "store"), Exclude: exclude, Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fullTree is what a fresh store's full walk records for wt.
func fullTree(t *testing.T, wt string, exclude ...string) Tree {
	t.Helper()
	s := openStore(t, wt, exclude...)
	tree, err := s.Track(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	return tree
}

// TestPropertyWatchedEqualsFullWalk runs random "commands" (batches of
// creates, writes, deletes, renames of files and directories, chmods,
// symlinks, type changes, nested directories created and removed within
// one command, writes into ignored and excluded directories) and checks
// after each that TrackChanged, re-stating only what inotify reported,
// records the same tree as a full walk by a fresh store. Commands that
// change a .gitignore or the index must say they walked in full, and so
// must one that overflows the inotify queue; the others must have used the
// watch. Changes to a nested .gitignore, to the index (git add -f of an
// ignored file, git rm --cached) and a commit in a nested repository (its
// HEAD moves with no event in the work tree) must be tracked by the watch;
// a change to the root .gitignore must walk in full.
// SNAPSHOT_PROPERTY_ITERS sets the number of sequences.
func TestPropertyWatchedEqualsFullWalk(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	for iter := range propertyIters(t) {
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(iter)))
			wt := t.TempDir()
			git(t, wt, nil, "init", "-q")
			writeFile(t, wt, ".gitignore", "*.log\nbuild/\n!build/keep.txt\n", 0o644)
			writeFile(t, wt, "build/tracked.txt", "t\n", 0o644)
			writeFile(t, wt, "src/a.go", "package a\n", 0o644)
			git(t, wt, nil, "add", "-f", ".gitignore", "build/tracked.txt", "src/a.go")
			nested := filepath.Join(wt, "vendor", "nested")
			writeFile(t, nested, "n.txt", "n\n", 0o644)
			git(t, nested, nil, "init", "-q")
			git(t, nested, nil, "add", "n.txt")
			git(t, nested, nil, "commit", "-qm", "one")
			s := openWatched(t, wt, "out")
			if _, err := s.Track(ctx); err != nil {
				t.Fatal(err)
			}
			m := &mutator{t: t, r: r, wt: wt}
			for step := range 14 {
				kind := m.command(step)
				tree, how, err := s.TrackChanged(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := fullTree(t, wt, "out"); tree != want {
					t.Fatalf("step %d (%s, %s): tracked tree %s, full walk %s\nlog:\n%s", step, kind, how, tree, want, strings.Join(m.log, "\n"))
				}
				switch {
				case kind == "overflow":
					if how.Method != "full" || !strings.Contains(how.Reason, "overflow") {
						t.Errorf("step %d: an overflowing command was tracked by %s", step, how)
					}
				case kind == "root-gitignore":
					if how.Method != "full" || !strings.Contains(how.Reason, ".gitignore") {
						t.Errorf("step %d: a root .gitignore change was tracked by %s", step, how)
					}
				case how.Method != "watch":
					t.Errorf("step %d (%s): tracked by %s, want watch", step, kind, how)
				}
				m.log = nil
			}
		})
	}
}

// mutator makes random changes to a work tree.
type mutator struct {
	t   *testing.T
	r   *rand.Rand
	wt  string
	log []string
}

var watchDirs = []string{"", "src", "src/x", "src/x/y", "build", "docs", "out", "n"}

// command applies one random batch and names its kind: "overflow",
// "root-gitignore", or another (tracked by the watch).
func (m *mutator) command(step int) string {
	switch {
	case step == 5:
		m.overflow()
		return "overflow"
	case step == 8:
		m.do("gitignore", func() error {
			return os.WriteFile(filepath.Join(m.wt, "src/.gitignore"), []byte(fmt.Sprintf("*.tmp%d\n", m.r.IntN(3))), 0o644)
		})
		return "gitignore"
	case step == 9:
		m.do("root gitignore", func() error {
			return os.WriteFile(filepath.Join(m.wt, ".gitignore"), []byte("*.log\nbuild/\n!build/keep.txt\n*.tmp1\n"), 0o644)
		})
		return "root-gitignore"
	case step == 10:
		writeFile(m.t, m.wt, "src/staged.go", "package a // staged\n", 0o644)
		writeFile(m.t, m.wt, "build/forced.txt", "f\n", 0o644)
		git(m.t, m.wt, nil, "add", "src/staged.go")
		git(m.t, m.wt, nil, "add", "-f", "build/forced.txt")
		git(m.t, m.wt, nil, "rm", "-q", "--cached", "--ignore-unmatch", "build/tracked.txt")
		m.log = append(m.log, "git add src/staged.go; git add -f build/forced.txt; git rm --cached build/tracked.txt")
		return "index"
	case step == 11:
		nested := m.abs("vendor/nested")
		writeFile(m.t, nested, "n.txt", "n2\n", 0o644)
		git(m.t, nested, nil, "commit", "-qam", "two")
		m.log = append(m.log, "commit in vendor/nested")
		return "nested-commit"
	}
	for range 1 + m.r.IntN(12) {
		m.op()
	}
	return "plain"
}

func (m *mutator) pick() string {
	d := watchDirs[m.r.IntN(len(watchDirs))]
	names := []string{"a.go", "b.txt", "c.log", "keep.txt", "d.tmp0", "e", "link", "sub"}
	return path.Join(d, names[m.r.IntN(len(names))])
}

func (m *mutator) abs(rel string) string { return filepath.Join(m.wt, filepath.FromSlash(rel)) }

func (m *mutator) do(what string, f func() error) {
	err := f()
	m.log = append(m.log, fmt.Sprintf("%s: %v", what, err))
}

// op is one random file system operation; failures (a parent that is a
// file, a missing source) are part of the game and only logged.
func (m *mutator) op() {
	p := m.pick()
	switch m.r.IntN(11) {
	case 0, 1:
		m.do("write "+p, func() error {
			_ = os.MkdirAll(filepath.Dir(m.abs(p)), 0o755)
			return os.WriteFile(m.abs(p), fmt.Appendf(nil, "v%d\n", m.r.IntN(1000)), 0o644)
		})
	case 2:
		m.do("append "+p, func() error {
			f, err := os.OpenFile(m.abs(p), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString("more\n")
			return errorsJoin(err, f.Close())
		})
	case 3:
		m.do("rm -rf "+p, func() error { return os.RemoveAll(m.abs(p)) })
	case 4:
		q := m.pick()
		m.do("mv "+p+" "+q, func() error { _ = os.MkdirAll(filepath.Dir(m.abs(q)), 0o755); return os.Rename(m.abs(p), m.abs(q)) })
	case 5:
		m.do("chmod "+p, func() error { return os.Chmod(m.abs(p), []os.FileMode{0o755, 0o644}[m.r.IntN(2)]) })
	case 6:
		m.do("ln -s "+p, func() error {
			_ = os.MkdirAll(filepath.Dir(m.abs(p)), 0o755)
			return os.Symlink([]string{"a.go", "../x", "nowhere"}[m.r.IntN(3)], m.abs(p))
		})
	case 7:
		// a nested tree created, filled and removed within one command
		d := path.Join(p, "t1/t2")
		m.do("mkdir -p, fill, rm -rf "+d, func() error {
			if err := os.MkdirAll(m.abs(d), 0o755); err != nil {
				return err
			}
			for i := range 3 {
				_ = os.WriteFile(m.abs(path.Join(d, fmt.Sprint(i))), []byte("x"), 0o644)
			}
			return os.RemoveAll(m.abs(p))
		})
	case 8:
		// a nested tree created and kept
		d := path.Join(p, "n1/n2")
		m.do("mkdir -p, fill "+d, func() error {
			if err := os.MkdirAll(m.abs(d), 0o755); err != nil {
				return err
			}
			_ = os.WriteFile(m.abs(path.Join(d, "deep.go")), []byte("deep\n"), 0o644)
			return os.WriteFile(m.abs(path.Join(p, "n1/top.txt")), []byte("top\n"), 0o644)
		})
	case 9:
		m.do("replace with dir "+p, func() error {
			_ = os.RemoveAll(m.abs(p))
			if err := os.MkdirAll(m.abs(p), 0o755); err != nil {
				return err
			}
			return os.WriteFile(m.abs(path.Join(p, "inner.txt")), []byte("in\n"), 0o644)
		})
	case 10:
		m.do("bash "+p, func() error {
			cmd := exec.CommandContext(context.Background(), "bash", "-c", `mkdir -p "$1" && echo hi > "$1/sh.txt" && mv "$1" "$1.moved" && touch "$1.moved/t"`, "bash", m.abs(p)+".d")
			return cmd.Run()
		})
	}
}

// overflow makes more events than the kernel queues (max_queued_events,
// 16384 by default) before the watcher reads any: chmods of alternating
// files queue attribute events the kernel cannot merge with the previous.
func (m *mutator) overflow() {
	q := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		_, _ = fmt.Sscan(string(b), &q)
	}
	f := [2]string{m.abs("src/flood0"), m.abs("src/flood1")} // src is watched since the first Track
	for _, p := range f {
		_ = os.WriteFile(p, []byte("x\n"), 0o644)
	}
	n := q + 1000
	for i := range n {
		_ = os.Chmod(f[i%2], []os.FileMode{0o644, 0o755}[(i/2)%2])
	}
	m.log = append(m.log, fmt.Sprintf("flood of %d chmods of src/flood0 and src/flood1", n))
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// TestWatchFallbacks: without Options.Watch, or with a watcher that
// cannot add watches, TrackChanged walks the whole tree and says why.
func TestWatchFallbacks(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	wt := t.TempDir()
	writeFile(t, wt, "a.txt", "a\n", 0o644)
	s := openStore(t, wt)
	if _, err := s.Track(ctx); err != nil {
		t.Fatal(err)
	}
	writeFile(t, wt, "b.txt", "b\n", 0o644)
	tree, how, err := s.TrackChanged(ctx, nil)
	if err != nil || how.Method != "full" || how.Reason != "watching is off" {
		t.Fatalf("unwatched store: %v, %v", how, err)
	}
	if want := fullTree(t, wt); tree != want {
		t.Errorf("tree %s, full walk %s", tree, want)
	}

	w := openWatched(t, wt)
	if _, _, err := w.TrackChanged(ctx, nil); err != nil { // first: no previous state
		t.Fatal(err)
	}
	_ = w.watch.close()
	w.watch.fd = -1 // every inotify call now fails, as at a watch limit
	writeFile(t, wt, "sub/c.txt", "c\n", 0o644)
	if _, how, err = w.TrackChanged(ctx, nil); err != nil || how.Method != "full" || !strings.Contains(how.Reason, "inotify read") {
		t.Fatalf("unreadable watcher: %v, %v", how, err)
	}
	writeFile(t, wt, "sub/d.txt", "d\n", 0o644)
	tree, how, err = w.TrackChanged(ctx, nil)
	if err != nil || how.Method != "full" || !strings.Contains(how.Reason, "inotify watch on") {
		t.Fatalf("broken watcher: %v, %v", how, err)
	}
	if want := fullTree(t, wt); tree != want {
		t.Errorf("tree %s, full walk %s", tree, want)
	}
}
