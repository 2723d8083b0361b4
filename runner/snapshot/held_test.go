package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStepObjectsAreHeld checks the held pack: the steps after a full
// Track create no object file (no loose object, no completed pack) yet
// their trees diff and patch at once; Close completes one pack that git
// verifies and checks out; the stat cache on disk never names a held
// object; and an unfinished pack a killed runner left is removed by the
// next Open.
func TestStepObjectsAreHeld(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	for i := range 20 {
		writeFile(t, wt, fmt.Sprintf("d%d/f%02d.txt", i%3, i), fmt.Sprintf("file %d\n", i), 0o644)
	}
	s := openStore(t, wt)
	base := track(t, s)
	packsAfterBase := completedPacks(t, s)
	cacheAfterBase, err := os.ReadFile(s.cachePath())
	if err != nil {
		t.Fatal(err)
	}
	var steps []Tree
	for i := range 5 {
		writeFile(t, wt, "d1/f01.txt", strings.Repeat(fmt.Sprintf("step %d\n", i), i+1), 0o644)
		writeFile(t, wt, fmt.Sprintf("new/n%d.txt", i), "new\n", 0o644)
		tree, err := s.TrackPaths(context.Background(), []string{"d1/f01.txt", fmt.Sprintf("new/n%d.txt", i)})
		if err != nil {
			t.Fatal(err)
		}
		var patch strings.Builder
		files, err := s.Patch(context.Background(), base, tree, &patch)
		if err != nil {
			t.Fatalf("step %d: patch from the held objects: %v", i, err)
		}
		if len(files) != 2+i || !strings.Contains(patch.String(), fmt.Sprintf("+step %d\n", i)) {
			t.Fatalf("step %d: %d files, patch:\n%s", i, len(files), patch.String())
		}
		steps = append(steps, tree)
	}
	if loose, _ := filepath.Glob(filepath.Join(s.storeDir, "objects", "??", "*")); len(loose) != 0 {
		t.Fatalf("steps wrote loose objects %v, want none", loose)
	}
	if got := completedPacks(t, s); !cmp.Equal(got, packsAfterBase) {
		t.Fatalf("steps completed packs %v, want still %v", got, packsAfterBase)
	}
	if got, _ := os.ReadFile(s.cachePath()); string(got) != string(cacheAfterBase) {
		t.Fatal("a step saved the stat cache, which would name objects not yet on disk")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	packs := completedPacks(t, s)
	if len(packs) != len(packsAfterBase)+1 {
		t.Fatalf("packs after Close = %v, want one more than %v", packs, packsAfterBase)
	}
	for _, p := range packs {
		if !slices.Contains(packsAfterBase, p) {
			git(t, wt, nil, "verify-pack", p)
		}
	}
	last := checkout(t, s, steps[len(steps)-1])
	if d := cmp.Diff(dirDigest(t, wt, nil), dirDigest(t, last, nil)); d != "" {
		t.Fatalf("git checkout of the last step's tree differs from the work tree:\n%s", d)
	}

	// A runner killed between steps leaves an unfinished pack.
	stale := filepath.Join(s.storeDir, "objects", "pack", "tmp_pack_123")
	if err := os.WriteFile(stale, []byte("PACK\x00\x00\x00\x02"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: s.storeDir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("unfinished pack after Open: %v, want removed", err)
	}
	if got := track(t, s2); got != steps[len(steps)-1] {
		t.Fatalf("reopened Track = %s, want the last step's %s", got, steps[len(steps)-1])
	}
}

// completedPacks lists the store's pack files that have an index.
func completedPacks(t *testing.T, s *Store) []string {
	t.Helper()
	idxs, err := filepath.Glob(filepath.Join(s.storeDir, "objects", "pack", "pack-*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, idx := range idxs {
		out = append(out, strings.TrimSuffix(idx, ".idx")+".pack")
	}
	return out
}
