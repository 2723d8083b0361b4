package batch

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestMergeCopiesSymlinks: a symlink the task changed is saved in
// out/<id>/tree/ as a link; merge must carry it over as a link (not drop
// it, which publishing would turn into a deletion, nor follow it).
func TestMergeCopiesSymlinks(t *testing.T) {
	t.Parallel()
	from, out := t.TempDir(), t.TempDir()
	tree := filepath.Join(from, "r1", TreeDir)
	if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "sub", "file.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"link":         "sub/file.txt",  // a link to a file in the tree
		"sub/dirlink":  "..",            // a link to a directory: never followed
		"dangling":     "gone.txt",      // its target is absent (deleted by the task)
		"sub/absolute": "/etc/hostname", // kept verbatim
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(tree, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyRepoDir(t.Context(), from, out, "r1"); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(out, "r1", TreeDir)
	tests := []struct {
		name, target string
	}{
		{"link", "sub/file.txt"},
		{"sub/dirlink", ".."},
		{"dangling", "gone.txt"},
		{"sub/absolute", "/etc/hostname"},
	}
	for _, tt := range tests {
		p := filepath.Join(got, filepath.FromSlash(tt.name))
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: mode %v, want a symlink", tt.name, fi.Mode())
			continue
		}
		if target, err := os.Readlink(p); err != nil || target != tt.target {
			t.Errorf("%s -> %q (%v), want -> %q", tt.name, target, err, tt.target)
		}
	}
	if data, err := os.ReadFile(filepath.Join(got, "sub", "file.txt")); err != nil || string(data) != "hi\n" {
		t.Errorf("regular file: %q, %v", data, err)
	}
}
