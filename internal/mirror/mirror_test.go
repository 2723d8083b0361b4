package mirror

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// setup makes a Set watching top/out, a log created before Start (with a
// first line) and a file in out/sub created after; it returns them.
func setup(t *testing.T) (s *Set, top, out string, log, sub *File) {
	t.Helper()
	top = t.TempDir()
	out = filepath.Join(top, ".runner", "runs", "id")
	s = New()
	if err := s.MkdirAll(out); err != nil {
		t.Fatal(err)
	}
	s.Watch(out, top)
	log, err := s.Create(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, log, "one\n")
	if err := s.Start(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	write(t, log, "two\n")
	if err := s.MkdirAll(filepath.Join(out, "sub")); err != nil {
		t.Fatal(err)
	}
	sub, err = s.CreateTemp(filepath.Join(out, "sub"), "out-*.log")
	if err != nil {
		t.Fatal(err)
	}
	write(t, sub, "full output\n")
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	return s, top, out, log, sub
}

func write(t *testing.T, w io.Writer, s string) {
	t.Helper()
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestoreUndoesEachTampering: each way a command could tamper with
// the out dir is found, named and undone; the log still open goes on
// writing to the restored file.
func TestRestoreUndoesEachTampering(t *testing.T) {
	tamper := map[string]func(t *testing.T, out string, sub *File) []string{
		"nothing": func(*testing.T, string, *File) []string { return nil },
		"log rewritten": func(t *testing.T, out string, _ *File) []string {
			t.Helper()
			p := filepath.Join(out, "events.jsonl")
			mustWrite(t, p, "forged\n")
			return []string{p}
		},
		"log truncated": func(t *testing.T, out string, _ *File) []string {
			t.Helper()
			p := filepath.Join(out, "events.jsonl")
			if err := os.Truncate(p, 0); err != nil {
				t.Fatal(err)
			}
			return []string{p}
		},
		"log deleted, output renamed": func(t *testing.T, out string, sub *File) []string {
			t.Helper()
			p := filepath.Join(out, "events.jsonl")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(sub.Name(), sub.Name()+".old"); err != nil {
				t.Fatal(err)
			}
			return []string{p, sub.Name(), sub.Name() + ".old"}
		},
		"log a link": func(t *testing.T, out string, _ *File) []string {
			t.Helper()
			p := filepath.Join(out, "events.jsonl")
			target := filepath.Join(t.TempDir(), "elsewhere")
			mustWrite(t, target, "one\ntwo\n")
			_ = os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			return []string{p}
		},
		"file and dir added": func(t *testing.T, out string, _ *File) []string {
			t.Helper()
			mustWrite(t, filepath.Join(out, "forged.txt"), "x")
			mustWrite(t, filepath.Join(out, "sub", "more", "deep.txt"), "x")
			return []string{filepath.Join(out, "forged.txt"), filepath.Join(out, "sub", "more")}
		},
		"parent a link": func(t *testing.T, out string, sub *File) []string {
			t.Helper()
			runs := filepath.Dir(out)
			moved := filepath.Join(filepath.Dir(runs), "moved")
			if err := os.Rename(runs, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(t.TempDir(), runs); err != nil {
				t.Fatal(err)
			}
			return []string{runs, filepath.Join(out, "events.jsonl"), sub.Name()}
		},
	}
	for name, do := range tamper {
		t.Run(name, func(t *testing.T) {
			s, _, out, log, sub := setup(t)
			want := do(t, out, sub)
			changed, err := s.Restore()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				if !slices.Contains(changed, w) {
					t.Errorf("changed = %q, want it to hold %s", changed, w)
				}
			}
			if len(want) == 0 && len(changed) > 0 {
				t.Errorf("changed = %q, want none", changed)
			}
			write(t, log, "three\n")
			if got := read(t, filepath.Join(out, "events.jsonl")); got != "one\ntwo\nthree\n" {
				t.Errorf("log = %q, want every line the runner wrote", got)
			}
			if fi, err := os.Lstat(filepath.Join(out, "events.jsonl")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("log is not a regular file: %v %v", fi, err)
			}
			if got := read(t, sub.Name()); got != "full output\n" {
				t.Errorf("output = %q", got)
			}
			for _, p := range []string{filepath.Join(out, "forged.txt"), filepath.Join(out, "sub", "more"), sub.Name() + ".old"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s is still there", p)
				}
			}
			if again, err := s.Restore(); err != nil || len(again) > 0 {
				t.Errorf("a second Restore changed %q (%v)", again, err)
			}
		})
	}
}

// TestNotStartedWritesPlainFiles: before Start nothing is mirrored and
// Restore has nothing to compare; a removed file leaves the Set.
func TestNotStartedWritesPlainFiles(t *testing.T) {
	s := New()
	dir := t.TempDir()
	f, err := s.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "x")
	_ = f.Close()
	if changed, err := s.Restore(); changed != nil || err != nil {
		t.Errorf("Restore of a Set not started = %q, %v", changed, err)
	}
	if err := s.Start(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Restore(); len(changed) > 0 || err != nil {
		t.Errorf("a removed file was restored: %q, %v", changed, err)
	}
}

// TestTruncateCutsBoth: a write cut back (the event log after a full
// disk) is cut back in the mirror too, so Restore sees no difference.
func TestTruncateCutsBoth(t *testing.T) {
	s, _, out, log, _ := setup(t)
	write(t, log, "partial")
	if err := log.Truncate(8); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Seek(8, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Restore(); len(changed) > 0 || err != nil {
		t.Errorf("Restore after a cut = %q, %v", changed, err)
	}
	if got := read(t, filepath.Join(out, "events.jsonl")); got != "one\ntwo\n" {
		t.Errorf("log = %q", got)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreKeepsWhatWasThere: entries in a watched directory before
// Watch (a file the caller put there, a reused out dir's leftovers) are
// not taken for a command's; one of them whose type changed, and entries
// added after, are removed and named.
func TestRestoreKeepsWhatWasThere(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	mustWrite(t, filepath.Join(out, "task.yaml"), "name: t\n")
	mustWrite(t, filepath.Join(out, "old", "run.log"), "earlier\n")
	mustWrite(t, filepath.Join(out, "gone.txt"), "x\n")
	s := New()
	s.Watch(out, "")
	if err := s.Start(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(out, "added.txt"), "by a command\n")
	mustWrite(t, filepath.Join(out, "old", "added.log"), "by a command\n")
	if err := os.Remove(filepath.Join(out, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(out, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	changed, err := s.Restore()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(out, "added.txt"), filepath.Join(out, "gone.txt"), filepath.Join(out, "old", "added.log")}
	if !slices.Equal(changed, want) {
		t.Errorf("changed = %q, want %q", changed, want)
	}
	if read(t, filepath.Join(out, "task.yaml")) != "name: t\n" || read(t, filepath.Join(out, "old", "run.log")) != "earlier\n" {
		t.Error("an entry that was there before Watch was touched")
	}
}

// TestUserSymlinkKept: a link the user had before the run (.runner →
// a cache directory) is followed when the Set makes its files, as it was
// resolved before any command ran, and never replaced: not by Create,
// not by Restore.
func TestUserSymlinkKept(t *testing.T) {
	top, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(top, ".runner")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(top, ".runner", "runs", "id")
	s := New()
	if err := s.MkdirAll(out); err != nil {
		t.Fatal(err)
	}
	s.Watch(out, top)
	log, err := s.Create(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	write(t, log, "one\n")
	changed, err := s.Restore()
	if err != nil || len(changed) > 0 {
		t.Errorf("Restore: %v %v, want nothing changed", changed, err)
	}
	if fi, err := os.Lstat(filepath.Join(top, ".runner")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf(".runner is no longer the user's link: %v %v", fi, err)
	}
	if got := read(t, filepath.Join(elsewhere, "runs", "id", "events.jsonl")); got != "one\n" {
		t.Errorf("the log through the user's link holds %q", got)
	}
}
