package batch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/pipeline"
)

// TestRunReplayDirMissingCassette: `batch run --replay DIR` where DIR has
// no cassette for one of the repositories to run is a usage error before
// the batch starts (exit 2, the missing file and the --record command
// named, nothing cloned or recorded), not that repository's task_failed;
// with the cassette added, the same batch runs.
func TestRunReplayDirMissingCassette(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 2, "retries: 2\n")
	write(t, filepath.Join(dir, "task.yaml"), strings.ReplaceAll(noteTask, "who", "name")) // makeBatch gives input name
	cassettes := filepath.Join(dir, "cassettes")
	if err := os.Mkdir(cassettes, 0o755); err != nil {
		t.Fatal(err)
	}
	noteCassette(t, filepath.Join(cassettes, "repos-r00.jsonl"))
	out, cache := filepath.Join(dir, "out"), filepath.Join(dir, "cache")
	opts := RunOptions{SpecPath: spec, Out: out, CacheDir: cache, RetryBackoff: time.Millisecond,
		Executor: &PipelineExecutor{Replay: cassettes}}
	_, err := Run(t.Context(), opts)
	if !errors.Is(err, pipeline.ErrUsage) || pipeline.ExitCode(err) != 2 {
		t.Fatalf("err = %v (exit %d), want a usage error, exit 2", err, pipeline.ExitCode(err))
	}
	for _, w := range []string{"holds no cassette for 1 of the 2 repositories to run (missing: repos-r01.jsonl)",
		"--record " + cassettes + "`", "needs OPENAI_API_KEY"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want %q in it", err, w)
		}
	}
	if _, err := os.Stat(cache); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the clone cache exists (err %v): a repository was cloned", err)
	}
	if res, err := ReadResults(out); err != nil || len(res) != 0 {
		t.Errorf("results = %v (err %v), want none", res, err)
	}

	noteCassette(t, filepath.Join(cassettes, "repos-r01.jsonl"))
	sum, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts[StatusSuccess] != 2 {
		t.Errorf("counts = %v, want 2 successes: %+v", sum.Counts, sum.Results)
	}
}

// TestExecutorCassetteGoneIsUsage: a cassette that vanished after the
// check (or never was, when Exec is called alone) is a refusal with exit
// code 2 naming the file and how to record it: Run records nothing for
// the repository (it never counts as the task's failure, and a rerun
// runs it).
func TestExecutorCassetteGoneIsUsage(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	gittest.Init(t, work, map[string]string{"README.md": "x\n"})
	cassettes := filepath.Join(root, "cassettes")
	if err := os.Mkdir(cassettes, 0o755); err != nil {
		t.Fatal(err)
	}
	o, err := (&PipelineExecutor{Replay: cassettes}).Exec(t.Context(), Job{RepoID: "app", WorkDir: work,
		SpecInline: []byte(noteTask), OutDir: filepath.Join(root, "out"), Attempt: 1})
	if !refusedErr(err) {
		t.Fatalf("Exec = %+v, %v; want a refusal (exit code 2)", o, err)
	}
	if !strings.Contains(err.Error(), "missing: app.jsonl") || !strings.Contains(err.Error(), "--record "+cassettes) {
		t.Errorf("error = %q, want the missing file and how to record it", err)
	}
}
