package batch

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/internal/tempdir"
)

// TestRunCollectsKilledBatchesLeftovers: a work tree and a half clone
// left by a killed batch (lock files nobody holds) are removed when the
// next batch starts, one a live process holds stays, and the batch's own
// work trees (each with its snapshot store beside it) are gone once it
// ends.
func TestRunCollectsKilledBatchesLeftovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 2, "")
	cache := filepath.Join(dir, "cache")
	deadWork := filepath.Join(cache, "work", "repos-r00-killed")
	deadClone := filepath.Join(cache, clonesDir, ".clone-repos-r01-killed")
	oldClone := filepath.Join(cache, ".clone-repos-r01-killed") // an earlier version's layout
	for _, d := range []string{deadWork, deadClone, oldClone} {
		if err := os.MkdirAll(filepath.Join(d, "repo"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, tempdir.LockFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(cache, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	live, err := tempdir.New(filepath.Join(cache, "work"), "repos-r00-live-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Remove() })

	fe := newFakeExec(func(string) behaviour { return edit })
	var seen []Job
	spy := jobSpy{fe, &seen}
	if _, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, "out"), Executor: spy, CacheDir: cache, Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "work", "*"))
	if len(left) != 1 || left[0] != live.Path() {
		t.Errorf("work dirs left: %v, want only the live one %s", left, live.Path())
	}
	if clones, _ := filepath.Glob(filepath.Join(cache, "*", ".clone-*")); len(clones) != 0 {
		t.Errorf("clones left: %v", clones)
	}
	if clones, _ := filepath.Glob(filepath.Join(cache, ".clone-*")); len(clones) != 0 {
		t.Errorf("clones left: %v", clones)
	}
	if len(seen) != 2 {
		t.Fatalf("jobs %v", seen)
	}
	for _, j := range seen {
		if filepath.Dir(j.WorkDir) != filepath.Dir(j.SnapshotDir) || filepath.Base(j.SnapshotDir) != "snapshots" {
			t.Errorf("job %s: work tree %s, snapshot store %s: want them side by side", j.RepoID, j.WorkDir, j.SnapshotDir)
		}
	}
}

// jobSpy records the jobs an Executor is given.
type jobSpy struct {
	*fakeExec
	jobs *[]Job
}

func (s jobSpy) Exec(ctx context.Context, job Job) (Outcome, error) {
	*s.jobs = append(*s.jobs, job)
	return s.fakeExec.Exec(ctx, job)
}

// TestJobSnapshotStoreBesideWorkTree: a job's snapshot store goes to its
// SnapshotDir, beside the work tree, and nothing to the user's cache (one
// store per batch work tree used to pile up there).
func TestJobSnapshotStoreBesideWorkTree(t *testing.T) {
	cacheHome := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	root := t.TempDir()
	work := filepath.Join(root, "attempt", "repo")
	gittest.Init(t, work, map[string]string{"README.md": "# app\n"})
	taskPath, cassette := filepath.Join(root, "task.yaml"), filepath.Join(root, "session.jsonl")
	write(t, taskPath, noteTask)
	noteCassette(t, cassette)
	store := filepath.Join(root, "attempt", "snapshots")
	o, err := (&PipelineExecutor{Replay: cassette}).Exec(t.Context(), Job{RepoID: "app", WorkDir: work, SnapshotDir: store,
		SpecPath: taskPath, Inputs: map[string]string{"who": "ops"}, OutDir: filepath.Join(root, "out", "app"), Attempt: 1})
	if err != nil || o.Status != "success" {
		t.Fatalf("Exec = %+v, %v", o, err)
	}
	if _, err := os.Stat(filepath.Join(store, "lock")); err != nil {
		t.Errorf("no snapshot store in the job's SnapshotDir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cacheHome, "runner", "snapshots")); !os.IsNotExist(err) {
		t.Errorf("the job made a snapshot store in the user cache (%v)", err)
	}
}
