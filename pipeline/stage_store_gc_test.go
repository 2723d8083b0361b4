package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// fakeStore makes a store directory with a lock file last used at used
// and a file of size bytes.
func fakeStore(t *testing.T, root, name string, used time.Time, size int) string {
	t.Helper()
	dir := filepath.Join(root, name)
	mustWrite(t, filepath.Join(dir, "objects", "pack"), strings.Repeat("x", size))
	mustWrite(t, filepath.Join(dir, "lock"), "")
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
	mustWrite(t, filepath.Join(root, "not-a-store", "x"), "")
	f, err := os.OpenFile(filepath.Join(inUse, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	pol := storePolicy{MaxAge: 30 * 24 * time.Hour, MaxBytes: 1000}
	removed, err := collectStores(t.Context(), root, now, pol)
	if err != nil || !slices.Equal(removed, []string{old, lru}) {
		t.Fatalf("removed %v (%v), want %v", removed, err, []string{old, lru})
	}
	for _, d := range []string{inUse, recent, filepath.Join(root, "not-a-store")} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	fakeStore(t, root, "old2", now.Add(-40*24*time.Hour), 10)
	if removed, err := collectStores(t.Context(), root, now.Add(time.Hour), pol); err != nil || len(removed) != 0 {
		t.Errorf("second collection within a day removed %v (%v)", removed, err)
	}
	if removed, err := collectStores(t.Context(), root, now.Add(25*time.Hour), pol); err != nil || len(removed) != 1 {
		t.Errorf("a day later removed %v (%v), want old2", removed, err)
	}
}

// TestExecCollectsOldStores: a run in place (its store in the user's
// cache) removes a store unused for 40 days and keeps its own.
func TestExecCollectsOldStores(t *testing.T) {
	spec, repo := execFixture(t) // XDG_CACHE_HOME is the test's
	root := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "runner", "snapshots")
	old := fakeStore(t, root, "0123456789abcdef", time.Now().Add(-40*24*time.Hour), 10)
	srv := newModel(t, llmtest.Turn{Text: "Nothing to do."}.Reply())
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "o"), BaseURL: srv.URL(),
		APIKey: testKey, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(root, "*"))
	if slices.Contains(left, old) || len(left) != 2 { // the run's own store and the stamp
		t.Errorf("stores left: %v, want the run's own (and the stamp), not %s", left, old)
	}
}
