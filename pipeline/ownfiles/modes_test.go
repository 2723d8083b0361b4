package ownfiles

import (
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
