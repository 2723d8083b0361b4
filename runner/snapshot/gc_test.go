package snapshot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeStore makes a store directory with a lock file last used at used
// and a file of size bytes.
func fakeStore(t *testing.T, root, name string, used time.Time, size int) string {
	t.Helper()
	dir := filepath.Join(root, name)
	writeFile(t, dir, "objects/pack", strings.Repeat("x", size), 0o644)
	writeFile(t, dir, "lock", "", 0o644)
	if err := os.Chtimes(filepath.Join(dir, "lock"), used, used); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCollectStores: stores unused for longer than the age go, then the
// least recently used while the total is over the size; a locked store
// (a live run's) stays however old; a second collection within a day
// does nothing.
func TestCollectStores(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	old := fakeStore(t, root, "old", now.Add(-40*24*time.Hour), 10)
	inUse := fakeStore(t, root, "in-use", now.Add(-50*24*time.Hour), 10)
	lru := fakeStore(t, root, "lru", now.Add(-3*time.Hour), 600)
	recent := fakeStore(t, root, "recent", now.Add(-time.Hour), 600)
	writeFile(t, root, "not-a-store/x", "", 0o644)
	f, err := os.OpenFile(filepath.Join(inUse, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	pol := StorePolicy{MaxAge: 30 * 24 * time.Hour, MaxBytes: 1000}
	removed, err := CollectStores(t.Context(), root, now, pol)
	if err != nil || !slices.Equal(removed, []string{old, lru}) {
		t.Fatalf("removed %v (%v), want %v", removed, err, []string{old, lru})
	}
	for _, d := range []string{inUse, recent, filepath.Join(root, "not-a-store")} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	fakeStore(t, root, "old2", now.Add(-40*24*time.Hour), 10)
	if removed, err := CollectStores(t.Context(), root, now.Add(time.Hour), pol); err != nil || len(removed) != 0 {
		t.Errorf("second collection within a day removed %v (%v)", removed, err)
	}
	if removed, err := CollectStores(t.Context(), root, now.Add(25*time.Hour), pol); err != nil || len(removed) != 1 {
		t.Errorf("a day later removed %v (%v), want old2", removed, err)
	}
}
