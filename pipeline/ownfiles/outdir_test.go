package ownfiles

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/mirror"
)

// TestWithinAndTreeRel: a path is within a directory when it is the
// directory or below it, never a sibling sharing its prefix; TreeRel
// makes paths in the work tree relative (slash) and leaves others alone.
func TestWithinAndTreeRel(t *testing.T) {
	for _, tt := range []struct {
		path, dir string
		want      bool
	}{
		{"/w", "/w", true},
		{"/w/a/b", "/w", true},
		{"/wx/a", "/w", false},
		{"/", "/w", false},
	} {
		if got := Within(tt.path, tt.dir); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
	for _, tt := range []struct{ tree, p, want string }{
		{"/w", "/w/.runner/runs/x", ".runner/runs/x"},
		{"/w", "/w", "."},
		{"/w", "/elsewhere/out", "/elsewhere/out"},
		{"", "/w/a", "/w/a"},
	} {
		if got := TreeRel(tt.tree, tt.p); got != tt.want {
			t.Errorf("TreeRel(%q, %q) = %q, want %q", tt.tree, tt.p, got, tt.want)
		}
	}
}

// TestRestoreOut: a file of this run's out dir in the work tree that a
// command rewrote, and one it added, are put back and removed once no
// command runs, named relative to the work tree; the runner_state
// message names them and says what could not be put back.
func TestRestoreOut(t *testing.T) {
	wt := t.TempDir()
	out := filepath.Join(wt, ".runner", "runs", "x")
	set := mirror.New()
	if err := set.MkdirAll(out); err != nil {
		t.Fatal(err)
	}
	set.Watch(out, wt)
	if err := set.Start(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	f, err := set.Create(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"type\":\"run.started\"}\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if changed, lost := RestoreOut(set, wt); len(changed) != 0 || lost != nil {
		t.Fatalf("nothing changed, RestoreOut = %q, %v", changed, lost)
	}
	if err := os.WriteFile(filepath.Join(out, "events.jsonl"), []byte("forged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "planted.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, lost := RestoreOut(set, wt)
	want := []string{".runner/runs/x/events.jsonl", ".runner/runs/x/planted.txt"}
	if !slices.Equal(changed, want) || lost != nil {
		t.Errorf("RestoreOut = %q, %v; want %q", changed, lost, want)
	}
	if data, _ := os.ReadFile(filepath.Join(out, "events.jsonl")); string(data) != "{\"type\":\"run.started\"}\n" {
		t.Errorf("events.jsonl after RestoreOut = %q", data)
	}
	if _, err := os.Lstat(filepath.Join(out, "planted.txt")); !os.IsNotExist(err) {
		t.Errorf("planted.txt is still there (%v)", err)
	}
	if msg := OutMessage(nil, nil); msg != "" {
		t.Errorf("OutMessage with nothing changed = %q", msg)
	}
	msg := OutMessage(changed, errors.New("summary.md: gone"))
	if !strings.Contains(msg, "(.runner/runs/x/events.jsonl, .runner/runs/x/planted.txt:") ||
		!strings.Contains(msg, "except: summary.md: gone (do not trust those)") {
		t.Errorf("OutMessage = %q", msg)
	}
}
