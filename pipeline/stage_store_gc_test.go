package pipeline

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// TestStoreGCCollectsOldStores: a run in place (its store in the user's
// cache) removes a store unused for 40 days and keeps its own. The
// store-gc stage runs on the state it reads: the snapshot store.
func TestStoreGCCollectsOldStores(t *testing.T) {
	_, repo := execFixture(t) // XDG_CACHE_HOME is the test's
	root := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "runner", "snapshots")
	old := filepath.Join(root, "0123456789abcdef") // a store last used 40 days ago
	mustWrite(t, filepath.Join(old, "lock"), "")
	if used := time.Now().Add(-40 * 24 * time.Hour); os.Chtimes(filepath.Join(old, "lock"), used, used) != nil {
		t.Fatal("chtimes")
	}
	store, err := snapshot.Open(t.Context(), snapshot.Options{WorkTree: repo})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r := &execRun{log: slog.New(slog.DiscardHandler), snapshotState: snapshotState{store: store}}
	if err := r.storeGC(t.Context()); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(root, "*"))
	if slices.Contains(left, old) || len(left) != 2 { // the run's own store and the stamp
		t.Errorf("stores left: %v, want the run's own (and the stamp), not %s", left, old)
	}
}
