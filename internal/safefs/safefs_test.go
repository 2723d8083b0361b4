package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// plant makes a root with an outside directory: root/link-file → outside
// file, root/link-dir → outside dir, root/a → outside dir (a parent).
func plant(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, filepath.Join(outside, "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"victim", "b/victim"} {
		if err := os.WriteFile(filepath.Join(outside, f), []byte("outside\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"link-file": filepath.Join(outside, "victim"), "link-dir": outside, "a": outside} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// snapshot is every path below dir with its mode and bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr
		}
		fi, _ := os.Lstat(p)
		data, _ := os.ReadFile(p)
		out[p] = fi.Mode().String() + " " + string(data)
		return nil
	})
	return out
}

// TestRepairsStayBeneath runs every mutation at a planted symlink as
// the file, as a directory and as a parent: the outside directory is
// unchanged, and with the fix switched off (SetFollowLinks) it changes.
func TestRepairsStayBeneath(t *testing.T) {
	ops := map[string]func(r *Root) error{
		"write file":       func(r *Root) error { return r.WriteFile("link-file", []byte("repaired\n"), 0o644) },
		"write in dir":     func(r *Root) error { return r.WriteFile("link-dir/victim", []byte("repaired\n"), 0o644) },
		"write in parent":  func(r *Root) error { return r.WriteFile("a/b/victim", []byte("repaired\n"), 0o644) },
		"create in parent": func(r *Root) error { f, err := r.Create("a/b/victim", 0o644); closeIf(f); return err },
		"remove in dir":    func(r *Root) error { return r.Remove("link-dir/victim") },
		"remove in parent": func(r *Root) error { return r.Remove("a/b") },
		"chmod file":       func(r *Root) error { return r.Chmod("link-file", 0o644) },
		"chmod in parent":  func(r *Root) error { return r.Chmod("a/b", 0o700) },
		"mkdir in parent":  func(r *Root) error { return r.MkdirAll("a/b/c", 0o755) },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			root, outside := plant(t)
			before := snapshot(t, outside)
			_ = op(New(root))
			if after := snapshot(t, outside); !mapsEqual(before, after) {
				t.Errorf("the outside directory changed:\nbefore %v\nafter  %v", before, after)
			}
			SetFollowLinks(true)
			defer SetFollowLinks(false)
			root, outside = plant(t)
			before = snapshot(t, outside)
			_ = op(New(root))
			if after := snapshot(t, outside); mapsEqual(before, after) {
				t.Errorf("control: with the links followed the outside directory did not change; the test proves nothing")
			}
		})
	}
}

func closeIf(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWriteReplacesWhatIsInTheWay: a write through a symlinked parent
// replaces the link with a directory and names it; the file lands
// beneath the root.
func TestWriteReplacesWhatIsInTheWay(t *testing.T) {
	root, _ := plant(t)
	r := New(root)
	if err := r.WriteFile("a/b/victim", []byte("repaired\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(root, "a"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("root/a is %v (%v), want a directory", fi, err)
	}
	data, _ := os.ReadFile(filepath.Join(root, "a", "b", "victim"))
	if string(data) != "repaired\n" {
		t.Errorf("root/a/b/victim holds %q", data)
	}
	if fi, _ := os.Stat(filepath.Join(root, "a", "b", "victim")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode())
	}
	if got := r.Replaced(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("Replaced %v, want [a]", got)
	}
	// A directory in the place of a file is replaced whole.
	if err := os.MkdirAll(filepath.Join(root, "d", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("d", []byte("file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := r.Replaced(); !slices.Equal(got, []string{"d"}) {
		t.Errorf("Replaced %v, want [d]", got)
	}
}

// TestReadsRefuseLinksAndFIFOs: a read through a symlink is ErrSymlink,
// a FIFO is ErrNotRegular at once (no hang), a file over the limit is
// ErrTooLarge.
func TestReadsRefuseLinksAndFIFOs(t *testing.T) {
	root, _ := plant(t)
	r := New(root)
	for _, rel := range []string{"link-file", "link-dir/victim", "a/b/victim"} {
		if _, err := r.ReadFile(rel, -1); !errors.Is(err, ErrSymlink) {
			t.Errorf("ReadFile(%s): %v, want ErrSymlink", rel, err)
		}
		if _, err := r.Lstat(rel + "x"); err == nil && rel != "link-file" {
			t.Errorf("Lstat below %s succeeded", rel)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile("fifo", -1); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(fifo): %v, want ErrNotRegular", err)
	}
	if err := os.WriteFile(filepath.Join(root, "big"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile("big", 99); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(big, 99): %v, want ErrTooLarge", err)
	}
	if data, err := r.ReadFile("big", 100); err != nil || len(data) != 100 {
		t.Errorf("ReadFile(big, 100): %d bytes, %v", len(data), err)
	}
	if _, err := r.ReadFile("../x", -1); err == nil {
		t.Error("ReadFile(../x) succeeded")
	}
}

// TestWalkDoesNotFollow: Walk lists a symlinked directory as a link and
// does not enter it; Chmod refuses a link and changes a directory.
func TestWalkDoesNotFollow(t *testing.T) {
	root, _ := plant(t)
	if err := os.MkdirAll(filepath.Join(root, "d", "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d", "e", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := New(root)
	var seen []string
	err := r.Walk(".", func(e *Entry) error {
		seen = append(seen, e.Rel+" "+e.Mode.Type().String())
		if e.Rel == "d/e/f" {
			if data, err := e.ReadFile(-1); err != nil || string(data) != "x" {
				t.Errorf("ReadFile of d/e/f: %q %v", data, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a L---------", "d d---------", "d/e d---------", "d/e/f ----------", "link-dir L---------", "link-file L---------"}
	if !slices.Equal(seen, want) {
		t.Errorf("walk %q, want %q", seen, want)
	}
	if err := r.Walk("a", func(*Entry) error { return nil }); err != nil {
		t.Errorf("Walk of a link: %v (the link is an entry)", err)
	}
	if err := r.Walk("a/b", func(*Entry) error { t.Error("walked below a link"); return nil }); !errors.Is(err, ErrSymlink) {
		t.Errorf("Walk(a/b): %v, want ErrSymlink", err)
	}
	if err := r.Chmod("link-dir", 0o700); !errors.Is(err, ErrSymlink) {
		t.Errorf("Chmod(link-dir): %v, want ErrSymlink", err)
	}
	if err := r.Chmod("d/e", 0o750|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(filepath.Join(root, "d", "e")); fi.Mode()&(fs.ModePerm|fs.ModeSticky) != 0o750|fs.ModeSticky {
		t.Errorf("mode %v, want sticky 0750", fi.Mode())
	}
}
