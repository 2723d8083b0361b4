package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestExecCollectsOldStores: a run in place (its store in the user's
// cache) removes a store unused for 40 days and keeps its own.
func TestExecCollectsOldStores(t *testing.T) {
	spec, repo := execFixture(t) // XDG_CACHE_HOME is the test's
	root := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "runner", "snapshots")
	old := filepath.Join(root, "0123456789abcdef") // a store last used 40 days ago
	mustWrite(t, filepath.Join(old, "lock"), "")
	if used := time.Now().Add(-40 * 24 * time.Hour); os.Chtimes(filepath.Join(old, "lock"), used, used) != nil {
		t.Fatal("chtimes")
	}
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
