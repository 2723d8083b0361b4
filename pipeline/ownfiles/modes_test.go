package ownfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModesRestore: a guarded directory whose mode a command changed
// (setgid and no write) is put back, reported once with both modes as
// chmod writes them, and named by the runner_state message relative to
// the work tree; an unchanged one is not.
func TestModesRestore(t *testing.T) {
	wt := t.TempDir()
	out := filepath.Join(wt, ".runner", "runs", "x")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	m := NewModes()
	m.Guard(out)
	if m.Restore() {
		t.Fatal("nothing changed, restore says it fixed something")
	}
	if err := os.Chmod(out, 0o500|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if !m.Restore() {
		t.Fatal("a changed mode was not put back")
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 || fi.Mode()&os.ModeSetgid != 0 {
		t.Fatalf("mode after restore: %v (%v)", fi.Mode(), err)
	}
	paths, msg := m.Message(wt)
	if !slices.Equal(paths, []string{".runner/runs/x"}) || !strings.Contains(msg, ".runner/runs/x 0755 → 2500") {
		t.Errorf("Message: %q, %q", paths, msg)
	}
	if m.Restore() {
		t.Error("a second restore found a change")
	}
}

// TestModesFixTree: a file and a directory below the out dir whose owner
// lost read and write (and search) get them back, keeping their other
// bits, and each is reported with both modes.
func TestModesFixTree(t *testing.T) {
	out := t.TempDir()
	sub := filepath.Join(out, "tool-output")
	file := filepath.Join(out, "events.jsonl")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewModes()
	m.Guard(out)
	if err := os.Chmod(file, 0o044); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sub, 0o055); err != nil {
		t.Fatal(err)
	}
	m.FixTree(out)
	for p, want := range map[string]os.FileMode{file: 0o644, sub: 0o755} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s after FixTree: %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	_, what := m.Changes()
	wantWhat := []string{file + " 0644 → 0044", sub + " 0755 → 0055"}
	slices.Sort(wantWhat)
	if !slices.Equal(what, wantWhat) {
		t.Errorf("Changes = %q, want %q", what, wantWhat)
	}
}

// TestRetryPerm: an operation refused with a permission error runs again
// once a changed mode was put back; with no mode changed it runs once
// and its error stands.
func TestRetryPerm(t *testing.T) {
	dir := t.TempDir()
	m := NewModes()
	m.Guard(dir)
	calls := 0
	refuseOnce := func() error {
		calls++
		if calls == 1 {
			return &os.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
		}
		return nil
	}
	if err := RetryPerm(m, refuseOnce); !errors.Is(err, fs.ErrPermission) || calls != 1 {
		t.Errorf("no mode changed: err %v after %d calls, want the permission error after 1", err, calls)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	calls = 0
	if err := RetryPerm(m, refuseOnce); err != nil || calls != 2 {
		t.Errorf("a mode changed: err %v after %d calls, want nil after 2", err, calls)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() == 0o500 {
		t.Errorf("the mode was not put back: %v (%v)", fi.Mode(), err)
	}
}
