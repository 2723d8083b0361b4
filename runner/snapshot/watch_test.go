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

// TestPropertyWatchedEqualsFullWalk runs random commands, each a real
// bash process (a perl one for the flood) writing the tree while the
// store's inotify watch runs: batches of creates, writes, appends,
// deletes, renames of files and directories (into and out of ignored and
// excluded directories), chmods, symlinks, type changes, copies of
// subtrees, and nested directories created and removed within one
// command; then checks after each that TrackChanged, re-stating only what
// inotify reported, records the same tree as a full walk by a fresh
// store. Commands that change the root .gitignore must say they walked in
// full, and so must one that overflows the inotify queue; the others must
// have used the watch. Changes to a nested .gitignore, to the index (git
// add -f of an ignored file, git rm --cached) and a commit in a nested
// repository (its HEAD moves with no event in the work tree) must be
// tracked by the watch. SNAPSHOT_PROPERTY_ITERS sets the number of
// sequences (default 4).
func TestPropertyWatchedEqualsFullWalk(t *testing.T) {
	isolateGit(t)
	for _, tool := range []string{"bash", "perl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the commands of this test are %s processes", tool, tool)
		}
	}
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
				kind, script := m.command(step)
				m.run(script)
				tree, how, err := s.TrackChanged(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := fullTree(t, wt, "out"); tree != want {
					t.Fatalf("step %d (%s, %s): tracked tree %s, full walk %s\ncommand:\n%s", step, kind, how, tree, want, script)
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
			}
		})
	}
}

// mutator writes random commands for a work tree and runs them.
type mutator struct {
	t  *testing.T
	r  *rand.Rand
	wt string
}

var watchDirs = []string{"", "src", "src/x", "src/x/y", "build", "docs", "out", "n"}

// run runs script with bash in the work tree; the commands' own failures
// (a parent that is a file, a missing source) are part of the game.
func (m *mutator) run(script string) {
	m.t.Helper()
	cmd := exec.CommandContext(context.Background(), "bash", "-c", script)
	cmd.Dir = m.wt
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		m.t.Fatalf("command: %v\n%s\n%s", err, script, out)
	}
}

// command writes one random command (a bash script) and names its kind:
// "overflow", "root-gitignore", or another (tracked by the watch).
func (m *mutator) command(step int) (kind, script string) {
	switch step {
	case 5:
		return "overflow", m.overflow()
	case 8:
		return "gitignore", fmt.Sprintf("printf '*.tmp%d\\n' > src/.gitignore", m.r.IntN(3))
	case 9:
		return "root-gitignore", `printf '*.log\nbuild/\n!build/keep.txt\n*.tmp1\n' > .gitignore`
	case 10:
		return "index", "mkdir -p src build && echo 'package a // staged' > src/staged.go && echo f > build/forced.txt\n" +
			"git add src/staged.go && git add -f build/forced.txt && git rm -q --cached --ignore-unmatch build/tracked.txt"
	case 11:
		return "nested-commit", "echo n2 > vendor/nested/n.txt && git -C vendor/nested commit -qam two"
	}
	var b strings.Builder
	for range 1 + m.r.IntN(12) {
		b.WriteString(m.op())
		b.WriteString("\n")
	}
	return "plain", b.String()
}

func (m *mutator) pick() string {
	d := watchDirs[m.r.IntN(len(watchDirs))]
	names := []string{"a.go", "b.txt", "c.log", "keep.txt", "d.tmp0", "e", "link", "sub"}
	return path.Join(d, names[m.r.IntN(len(names))])
}

// op is one random file system operation as a line of bash; "|| true"
// keeps a failing one from ending the command.
func (m *mutator) op() string {
	p := m.pick()
	q := shellQuote(p)
	mkParent := "mkdir -p " + shellQuote(path.Dir(p)) + " 2>/dev/null; "
	var line string
	switch m.r.IntN(12) {
	case 0, 1:
		line = mkParent + fmt.Sprintf("echo v%d > %s", m.r.IntN(1000), q)
	case 2:
		line = fmt.Sprintf("[ -e %s ] && echo more >> %s", q, q)
	case 3:
		line = "rm -rf " + q
	case 4:
		to := m.pick()
		line = "mkdir -p " + shellQuote(path.Dir(to)) + " 2>/dev/null; mv -T " + q + " " + shellQuote(to)
	case 5:
		line = fmt.Sprintf("chmod %s %s", []string{"755", "644"}[m.r.IntN(2)], q)
	case 6:
		line = mkParent + "ln -s " + []string{"a.go", "../x", "nowhere"}[m.r.IntN(3)] + " " + q
	case 7: // a nested tree created, filled and removed within one command
		d := shellQuote(path.Join(p, "t1/t2"))
		line = fmt.Sprintf("mkdir -p %s && for i in 0 1 2; do echo x > %s/$i; done; rm -rf %s", d, d, q)
	case 8: // a nested tree created and kept
		line = fmt.Sprintf("mkdir -p %s/n1/n2 && echo deep > %s/n1/n2/deep.go && echo top > %s/n1/top.txt", q, q, q)
	case 9:
		line = fmt.Sprintf("rm -rf %s; mkdir -p %s && echo in > %s/inner.txt", q, q, q)
	case 10:
		line = fmt.Sprintf("mkdir -p %s.d && echo hi > %s.d/sh.txt && mv %s.d %s.moved && touch %s.moved/t", q, q, q, q, q)
	case 11: // a subtree copied in one go (never the root: nothing outside the tree is named)
		from := watchDirs[1+m.r.IntN(len(watchDirs)-1)]
		line = mkParent + "cp -r " + shellQuote(from) + " " + q + ".copy"
	}
	return "{ " + line + "; } 2>/dev/null || true"
}

func shellQuote(s string) string {
	if s == "" || s == "." {
		return "."
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// overflow is a perl process making more events than the kernel queues
// (max_queued_events, 16384 by default) before the watcher reads any:
// chmods of alternating files queue attribute events the kernel cannot
// merge with the previous.
func (m *mutator) overflow() string {
	q := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		_, _ = fmt.Sscan(string(b), &q)
	}
	// src is watched since the first Track
	return fmt.Sprintf(`mkdir -p src && echo x > src/flood0 && echo x > src/flood1 && perl -e 'for my $i (0..%d) { chmod((($i>>1)%%2) ? 0755 : 0644, "src/flood".($i%%2)) }'`, q+1000)
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
