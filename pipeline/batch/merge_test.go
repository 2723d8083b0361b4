package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/pipeline"
)

// runShards runs the batch at spec as n shards into dir/shard-I and
// returns the shard dirs.
func runShards(t *testing.T, spec, dir string, n int) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		fe := newFakeExec(func(id string) behaviour {
			if id == "repos-r02" {
				return taskFail
			}
			return edit
		})
		sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Shard: i, Shards: n, Executor: fe, Concurrency: 2, CacheDir: sharedCache(t)})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Shard != fmt.Sprintf("%d/%d", i, n) || sum.Total != len(ShardIndices(9, Shard{i, n})) {
			t.Fatalf("shard %d: summary %+v", i, sum)
		}
		dirs = append(dirs, out)
	}
	return dirs
}

func TestMergeShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 9, "")
	dirs := runShards(t, spec, dir, 3)

	t.Run("complete", func(t *testing.T) {
		out := filepath.Join(dir, "merged")
		rep, err := Merge(t.Context(), dirs, out)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 9 || len(rep.Missing) != 0 || len(rep.Duplicates) != 0 {
			t.Fatalf("report: %d results, missing %v, duplicates %v", len(rep.Results), rep.Missing, rep.Duplicates)
		}
		results, err := ReadResults(out)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range results {
			if want := fmt.Sprintf("repos-r%02d", i); r.ID != want {
				t.Errorf("merged line %d is %s, want %s (manifest order)", i, r.ID, want)
			}
			if r.PatchPath != "" {
				if _, err := os.Stat(filepath.Join(out, r.PatchPath)); err != nil {
					t.Errorf("patch not copied: %v", err)
				}
			}
		}
		summary, err := os.ReadFile(filepath.Join(out, SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"## Batch demo: 9 repositories", "| success | 8 |", "| task_failed | 1 |", "| repos-r02 | task_failed |"} {
			if !strings.Contains(string(summary), want) {
				t.Errorf("summary.md lacks %q:\n%s", want, summary)
			}
		}
	})

	t.Run("missing shard", func(t *testing.T) {
		out := filepath.Join(dir, "merged-missing")
		rep, err := Merge(t.Context(), []string{dirs[0], dirs[2]}, out)
		if !errors.Is(err, ErrIncomplete) {
			t.Fatalf("err = %v, want ErrIncomplete", err)
		}
		want := []string{"repos-r01", "repos-r04", "repos-r07"} // shard 1 of 3
		if diff := cmp.Diff(want, rep.Missing); diff != "" {
			t.Errorf("missing (-want +got):\n%s", diff)
		}
		summary, _ := os.ReadFile(filepath.Join(out, SummaryFile))
		if !strings.Contains(string(summary), "| **missing** | 3 |") || !strings.Contains(string(summary), "- repos-r04") {
			t.Errorf("summary.md does not list the missing repositories:\n%s", summary)
		}
	})

	t.Run("into an earlier merge", func(t *testing.T) {
		out := filepath.Join(dir, "merged-twice")
		if _, err := Merge(t.Context(), dirs, out); err != nil {
			t.Fatal(err)
		}
		if _, err := Merge(t.Context(), []string{dirs[0], dirs[2]}, out); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("err = %v, want ErrIncomplete", err)
		}
		if _, err := os.Stat(filepath.Join(out, "repos-r01")); !os.IsNotExist(err) {
			t.Errorf("the stale dir of repos-r01 (not in this merge) is still there: %v", err)
		}
		if _, err := os.Stat(filepath.Join(out, "repos-r00", "changes.patch")); err != nil {
			t.Errorf("merged repos-r00: %v", err)
		}
	})

	t.Run("into an input", func(t *testing.T) {
		_, err := Merge(t.Context(), dirs, dirs[1]+string(filepath.Separator))
		if !errors.Is(err, ErrMergeIntoInput) || pipeline.ExitCode(err) != pipeline.ExitUsage {
			t.Errorf("err = %v (exit %d), want ErrMergeIntoInput, exit 2", err, pipeline.ExitCode(err))
		}
		if _, err := os.Stat(filepath.Join(dirs[1], SummaryFile)); err != nil {
			t.Errorf("the input lost its summary: %v", err)
		}
	})

	t.Run("duplicates", func(t *testing.T) {
		// Shard 0 of 3 run again as shard 0 of 2 overlaps with shard 2 of 3 on r06.
		again := filepath.Join(dir, "again")
		fe := newFakeExec(func(string) behaviour { return noop })
		if _, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: again, Shard: 0, Shards: 2, Executor: fe, CacheDir: sharedCache(t)}); err != nil {
			t.Fatal(err)
		}
		rep, err := Merge(t.Context(), append(slices.Clone(dirs), again), filepath.Join(dir, "merged-dup"))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range rep.Duplicates {
			ids = append(ids, d.ID)
			if d.Kept != again {
				t.Errorf("%s: kept %s, want the later result from %s", d.ID, d.Kept, again)
			}
		}
		if diff := cmp.Diff([]string{"repos-r00", "repos-r02", "repos-r04", "repos-r06", "repos-r08"}, ids); diff != "" {
			t.Errorf("duplicates (-want +got):\n%s", diff)
		}
		if len(rep.Problems()) != 5 {
			t.Errorf("problems: %q", rep.Problems())
		}
	})

	t.Run("manifest mismatch", func(t *testing.T) {
		other := t.TempDir()
		if _, err := FreezeManifest(other, &Manifest{Version: 1, Name: "x", Repos: []Repo{{ID: "a", Path: "a"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := Merge(context.Background(), []string{dirs[0], other}, t.TempDir()); !errors.Is(err, ErrManifestMismatch) {
			t.Errorf("err = %v, want ErrManifestMismatch", err)
		}
	})
}

func TestRunRejectsChangedManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 2, "")
	out := filepath.Join(dir, "out")
	m := &Manifest{Version: 1, Name: "demo", Repos: []Repo{{ID: "other", URL: "https://example.com/x"}}}
	if _, err := FreezeManifest(out, m); err != nil {
		t.Fatal(err)
	}
	_, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Executor: newFakeExec(nil)})
	if !errors.Is(err, ErrManifestMismatch) || pipeline.ExitCode(err) != pipeline.ExitUsage {
		t.Errorf("err = %v (exit %d), want ErrManifestMismatch, exit 2", err, pipeline.ExitCode(err))
	}
	if err != nil && !strings.Contains(err.Error(), "use a new --out directory") {
		t.Errorf("err = %v does not say what to do", err)
	}
}
