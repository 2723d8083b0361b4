package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Helper()               {}

// check runs Check with a recorder and reports whether it failed.
func check(t *testing.T, path string, got []byte) (failed bool) {
	t.Helper()
	r := &recorder{TB: t}
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
		failed = r.failed
	}()
	Check(r, path, got)
	return r.failed
}

// TestCheck: equal content passes, a difference or a missing file fails,
// and -update writes the file (creating its directory).
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if check(t, path, []byte("same\n")) {
		t.Error("equal content failed")
	}
	if !check(t, path, []byte("other\n")) {
		t.Error("different content passed")
	}
	if !check(t, filepath.Join(dir, "missing.golden"), []byte("x")) {
		t.Error("a missing golden file passed")
	}
	*update = true
	defer func() { *update = false }()
	newPath := filepath.Join(dir, "sub", "b.golden")
	if check(t, newPath, []byte("new\n")) || !Update() {
		t.Error("-update did not pass")
	}
	if data, err := os.ReadFile(newPath); err != nil || string(data) != "new\n" {
		t.Errorf("-update wrote %q, %v", data, err)
	}
}
