package snapshot

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// settledClock waits until FileClock has passed the change time of every
// file below root (the kernel stamps from a coarse tick, so a file written
// a moment ago may carry the time FileClock returns now) and returns it:
// whatever is changed after it is at or after it, nothing before.
func settledClock(t *testing.T, root string) time.Time {
	t.Helper()
	var newest int64
	err := filepath.Walk(root, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			newest = max(newest, st.Ctim.Nano())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if now := FileClock(); now.UnixNano() > newest {
			return now
		}
		if time.Now().After(deadline) {
			t.Fatalf("FileClock did not pass the newest change time %d within 10 s", newest)
		}
		time.Sleep(time.Millisecond) // the clock's next tick: a condition polled, not a guess
	}
}

// TestIgnoredWritten: every kind of change to a file in an ignored path
// after the point in time is listed (created, appended, chmod'ed,
// renamed, re-timed into the past, a symlink, a hard link, a file in a new
// ignored directory), and an ignored directory changed with no file
// listed below it (a file deleted, moved in, moved out of); nothing else
// is: ignored files left alone, files in
// the snapshots (untracked or tracked, also a tracked one in an ignored
// directory), the excluded out dir, .git, a nested repository; the list
// is bounded and the total counts all.
func TestIgnoredWritten(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	git(t, wt, nil, "init", "-q")
	for rel, content := range map[string]string{
		".gitignore":          "node_modules/\n*.log\nlocal.cfg\nbuild/\nout/\ncache/\nstash/\n",
		"main.go":             "package main\n",
		"node_modules/a.js":   "a",
		"node_modules/old.js": "old",
		"node_modules/mv.js":  "mv",
		"local.cfg":           "x=1\n",
		"run.log":             "log",
		"keep.log":            "keep",
		"build/tracked.txt":   "t",
		"nested/.git/HEAD":    "ref: refs/heads/main\n",
		"nested/x.log":        "n",
		"cache/gone.o":        "o",
		"cache/kept.o":        "k",
		"stash/pkg/run.sh":    "#!/bin/sh\n",
		"stash/other":         "o",
	} {
		writeFile(t, wt, rel, content, 0o644)
	}
	git(t, wt, nil, "add", ".gitignore", "main.go")
	git(t, wt, nil, "add", "-f", "build/tracked.txt")
	git(t, wt, nil, "commit", "-qm", "base")
	s := openStore(t, wt, "out")
	if _, err := s.Track(t.Context()); err != nil {
		t.Fatal(err)
	}
	since := settledClock(t, wt)

	writeFile(t, wt, "node_modules/.bin/jest", "#!/bin/sh\necho pwned\n", 0o755) // new file, new dir
	appendFile(t, filepath.Join(wt, "local.cfg"), "x=2\n")
	must(t, os.Chmod(filepath.Join(wt, "run.log"), 0o600))
	must(t, os.Rename(filepath.Join(wt, "node_modules/mv.js"), filepath.Join(wt, "node_modules/moved.js")))
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	must(t, os.Chtimes(filepath.Join(wt, "node_modules/a.js"), old, old)) // mtime into the past: ctime is now
	must(t, os.Symlink("/tmp/payload", filepath.Join(wt, "node_modules/link")))
	must(t, os.Link(filepath.Join(wt, "main.go"), filepath.Join(wt, "build/hard.txt")))
	writeFile(t, wt, "build/gen/deep/out.bin", "bin", 0o644)
	// Not listed: in the snapshots, excluded, in .git or a nested repository.
	writeFile(t, wt, "new.go", "package main\n", 0o644)
	appendFile(t, filepath.Join(wt, "build/tracked.txt"), "more")
	writeFile(t, wt, "out/events.jsonl", "{}", 0o644)
	writeFile(t, wt, ".git/hooks/x.log", "h", 0o644)
	writeFile(t, wt, "nested/y.log", "n", 0o644)
	must(t, os.Remove(filepath.Join(wt, "node_modules/old.js"))) // gone, but node_modules has files listed
	// Directories listed alone: one a file was deleted from, one moved in
	// (its file keeps its change time) and the one it left.
	must(t, os.Remove(filepath.Join(wt, "cache/gone.o")))
	must(t, os.Rename(filepath.Join(wt, "stash/pkg"), filepath.Join(wt, "node_modules/.bin2")))

	want := []string{"build/gen/deep/out.bin", "build/hard.txt", "cache/", "local.cfg", "node_modules/.bin/jest", "node_modules/.bin2/",
		"node_modules/a.js", "node_modules/link", "node_modules/moved.js", "run.log", "stash/"}
	got, err := s.IgnoredWritten(t.Context(), since, 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(IgnoredWrites{Paths: want, Total: len(want)}, got); d != "" {
		t.Errorf("IgnoredWritten (-want +got):\n%s", d)
	}
	got, err = s.IgnoredWritten(t.Context(), since, 3)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(IgnoredWrites{Paths: want[:3], Total: len(want)}, got); d != "" {
		t.Errorf("limit 3 (-want +got):\n%s", d)
	}
	// Since now: nothing was written after it.
	later := settledClock(t, wt)
	if got, err = s.IgnoredWritten(t.Context(), later, 100); err != nil || got.Total != 0 || len(got.Paths) != 0 {
		t.Errorf("since after the writes: %+v, %v; want none", got, err)
	}
}

// TestIgnoredWrittenPlainDir: outside a repository only the global
// excludes file ignores anything; with no rules nothing is ignored and
// nothing is listed, whatever changed.
func TestIgnoredWrittenPlainDir(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	writeFile(t, wt, "a.txt", "a", 0o644)
	s := openStore(t, wt)
	if _, err := s.Track(t.Context()); err != nil {
		t.Fatal(err)
	}
	since := settledClock(t, wt)
	writeFile(t, wt, "node_modules/.bin/jest", "x", 0o755)
	got, err := s.IgnoredWritten(t.Context(), since, 10)
	if err != nil || got.Total != 0 {
		t.Errorf("plain dir: %+v, %v; want nothing ignored", got, err)
	}
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
