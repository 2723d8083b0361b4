package ownfiles

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// writeFiles writes files (slash paths below root → content).
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readOr is the content of root's file rel, or "<err>" when it cannot
// be read.
func readOr(root, rel string) string {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// TestStateRestore: earlier runs' files a command rewrote, removed or
// added under .runner are put back and named; this run's out dir (skip)
// is left alone; a second Restore finds nothing.
func TestStateRestore(t *testing.T) {
	wt := t.TempDir()
	writeFiles(t, wt, map[string]string{
		".runner/runs/a/result.json":   `{"status":"success"}`,
		".runner/runs/a/events.jsonl":  "{}\n",
		".runner/runs/me/events.jsonl": "mine\n",
		"src/main.go":                  "package main\n",
	})
	s := ArmState(safefs.New(wt), ".runner/runs/me")
	if s == nil {
		t.Fatal("ArmState found no .runner")
	}
	writeFiles(t, wt, map[string]string{
		".runner/runs/a/result.json":   `{"status":"forged"}`,
		".runner/runs/forged.txt":      "forged\n",
		".runner/runs/me/events.jsonl": "mine, later\n",
	})
	if err := os.Remove(filepath.Join(wt, ".runner/runs/a/events.jsonl")); err != nil {
		t.Fatal(err)
	}
	changed, lost := s.Restore()
	want := []string{".runner/runs/a/events.jsonl", ".runner/runs/a/result.json", ".runner/runs/forged.txt"}
	if !slices.Equal(changed, want) || len(lost) != 0 {
		t.Errorf("Restore = %q, lost %q; want %q and none lost", changed, lost, want)
	}
	for rel, content := range map[string]string{
		".runner/runs/a/result.json":   `{"status":"success"}`,
		".runner/runs/a/events.jsonl":  "{}\n",
		".runner/runs/me/events.jsonl": "mine, later\n", // this run's own: not the tripwire's
	} {
		if got := readOr(wt, rel); got != content {
			t.Errorf("%s after Restore = %q, want %q", rel, got, content)
		}
	}
	if _, err := os.Lstat(filepath.Join(wt, ".runner/runs/forged.txt")); !os.IsNotExist(err) {
		t.Errorf("the added file is still there (%v)", err)
	}
	if changed, lost := s.Restore(); len(changed)+len(lost) != 0 {
		t.Errorf("a second Restore = %q, lost %q; want nothing", changed, lost)
	}
}

// TestStateRestoreFollowsNoLink: a file of an earlier run replaced by a
// symlink to a file outside the work tree is put back in .runner; the
// file outside keeps its content. The control shows a plain write
// through that link would have changed it.
func TestStateRestoreFollowsNoLink(t *testing.T) {
	wt, outside := t.TempDir(), filepath.Join(t.TempDir(), "victim")
	writeFiles(t, wt, map[string]string{".runner/runs/a/result.json": "original\n"})
	if err := os.WriteFile(outside, []byte("victim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := ArmState(safefs.New(wt), "")
	link := filepath.Join(wt, ".runner/runs/a/result.json")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	changed, lost := s.Restore()
	if !slices.Contains(changed, ".runner/runs/a/result.json") || len(lost) != 0 {
		t.Errorf("Restore = %q, lost %q; want result.json changed, none lost", changed, lost)
	}
	if got := readOr(filepath.Dir(outside), "victim"); got != "victim\n" {
		t.Errorf("the file outside the work tree became %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() || readOr(wt, ".runner/runs/a/result.json") != "original\n" {
		t.Errorf("result.json after Restore: %v (%v), %q; want the original regular file", fi, err, readOr(wt, ".runner/runs/a/result.json"))
	}
	// Control: a write that follows the link reaches the file outside.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readOr(filepath.Dir(outside), "victim"); got != "original\n" {
		t.Errorf("control: a write through the link left the file outside as %q", got)
	}
}

// TestArmStateWithoutRunnerDir: a work tree without .runner (or with a
// file of that name) arms nothing, and a nil State restores nothing.
func TestArmStateWithoutRunnerDir(t *testing.T) {
	wt := t.TempDir()
	if s := ArmState(safefs.New(wt), ""); s != nil {
		t.Errorf("ArmState without .runner = %+v, want nil", s)
	}
	writeFiles(t, wt, map[string]string{".runner": "a file\n"})
	s := ArmState(safefs.New(wt), "")
	if s != nil {
		t.Errorf("ArmState with a file .runner = %+v, want nil", s)
	}
	if changed, lost := s.Restore(); changed != nil || lost != nil {
		t.Errorf("nil State's Restore = %q, %q", changed, lost)
	}
}

// TestStateRestoreSparse: a sparse 1 TiB file added under .runner, and
// an earlier run's file grown to one, are named and dealt with without
// being read (read whole, one crashed the runner); a same-size rewrite
// of a file over StateCap is caught by its digest and named lost.
func TestStateRestoreSparse(t *testing.T) {
	wt := t.TempDir()
	writeFiles(t, wt, map[string]string{".runner/runs/a/result.json": `{"status":"success"}`, ".runner/runs/a/out.log": ""})
	big := filepath.Join(wt, ".runner", "runs", "a", "big.log")
	writeFiles(t, wt, map[string]string{".runner/runs/a/big.log": ""})
	if err := os.Truncate(big, StateCap+1); err != nil {
		t.Fatal(err)
	}
	s := ArmState(safefs.New(wt), "")
	for _, p := range []string{".runner/runs/added.bin", ".runner/runs/a/out.log"} {
		writeFiles(t, wt, map[string]string{p: ""})
		if err := os.Truncate(filepath.Join(wt, filepath.FromSlash(p)), 1<<40); err != nil {
			t.Skipf("a sparse 1 TiB file: %v", err)
		}
	}
	f, err := os.OpenFile(big, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("forged"), 100); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	changed, lost := s.Restore()
	want := []string{".runner/runs/a/big.log", ".runner/runs/a/out.log", ".runner/runs/added.bin"}
	if !slices.Equal(changed, want) || !slices.Equal(lost, []string{".runner/runs/a/big.log"}) {
		t.Errorf("Restore = %q, lost %q; want %q, big.log lost", changed, lost, want)
	}
	if fi, err := os.Stat(filepath.Join(wt, ".runner", "runs", "a", "out.log")); err != nil || fi.Size() != 0 {
		t.Errorf("out.log after Restore: %v, %v; want it empty again", fi, err)
	}
}
