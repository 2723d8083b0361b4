package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFirstTrackWritesAPack checks the pack path: a first snapshot of a
// directory of 200 files lands in one pack (no loose objects) that git
// verifies and reads, and later snapshots and patches read through it.
func TestFirstTrackWritesAPack(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	for i := range 200 {
		writeFile(t, wt, fmt.Sprintf("d%d/f%03d.txt", i%7, i), fmt.Sprintf("file %d\nsecond line\n", i), 0o644)
	}
	writeFile(t, wt, "bin/blob", "\x00\x01\x02binary", 0o644)
	s := openStore(t, wt)
	a := track(t, s)
	packs, _ := filepath.Glob(filepath.Join(s.storeDir, "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs after first Track = %v, want one", packs)
	}
	if loose, _ := filepath.Glob(filepath.Join(s.storeDir, "objects", "??", "*")); len(loose) != 0 {
		t.Fatalf("first Track wrote loose objects %v, want none", loose)
	}
	git(t, wt, nil, "verify-pack", packs[0])
	pristine := checkout(t, s, a)
	if d := cmp.Diff(dirDigest(t, wt, nil), dirDigest(t, pristine, nil)); d != "" {
		t.Fatalf("git checkout of the packed snapshot differs:\n%s", d)
	}

	writeFile(t, wt, "d1/f001.txt", "file 1\nchanged\n", 0o644)
	if err := os.Remove(filepath.Join(wt, "d2/f002.txt")); err != nil {
		t.Fatal(err)
	}
	b, err := s.TrackPaths(context.Background(), []string{"d1/f001.txt", "d2/f002.txt"})
	if err != nil {
		t.Fatal(err)
	}
	checkPatchApplies(t, s, a, b, pristine, wt)

	// A reopened store knows the packed objects and writes nothing new.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.storeDir, "stat-cache")); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: s.storeDir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	before, _ := filepath.Glob(filepath.Join(s.storeDir, "objects", "??", "*"))
	if got := track(t, s2); got != b {
		t.Fatalf("reopened Track = %s, want %s", got, b)
	}
	after, _ := filepath.Glob(filepath.Join(s.storeDir, "objects", "??", "*"))
	if len(after) != len(before) {
		t.Fatalf("reopened Track wrote %d loose objects, want none", len(after)-len(before))
	}
}
