package batch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/runner/event"
)

// refusingExec refuses one repository's job as exec refuses a run with
// exit code 2; wait, when set, is a repository whose job starts only once
// that refusal has been returned (so it is under way when it happens).
type refusingExec struct {
	*fakeExec
	refuse, wait string
	refused      chan struct{}
	mu           sync.Mutex
	refusals     int
}

func (r *refusingExec) Exec(ctx context.Context, job Job) (Outcome, error) {
	switch job.RepoID {
	case r.refuse:
		r.mu.Lock()
		r.refusals++
		r.mu.Unlock()
		defer close(r.refused)
		return Outcome{}, fmt.Errorf("%s: %w: the cassette does not fit", job.RepoID, pipeline.ErrUsage)
	case r.wait:
		select {
		case <-r.refused:
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
	}
	return r.fakeExec.Exec(ctx, job)
}

// TestRunRefusalIsNotAResult: a job the executor refuses at run time
// (exit code 2, what the checks up front could not foresee) is never
// recorded, not retried, and stops the batch with exit 2: no further
// repository starts, one under way finishes and is recorded, and a rerun
// runs the refused repository and the ones not started (H2: never a final
// task_failed that blocks the rerun).
func TestRunRefusalIsNotAResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 4, "retries: 2\n")
	out := filepath.Join(dir, "out")
	// Concurrency 2: r00 waits until r01 is refused, so it is under way then.
	ex := &refusingExec{fakeExec: newFakeExec(func(string) behaviour { return edit }), refuse: "repos-r01", wait: "repos-r00", refused: make(chan struct{})}
	opts := RunOptions{SpecPath: spec, Out: out, CacheDir: sharedCache(t), Concurrency: 2, RetryBackoff: time.Millisecond, Executor: ex}
	sum, err := Run(t.Context(), opts)
	if !errors.Is(err, ErrRefused) || !errors.Is(err, pipeline.ErrUsage) || pipeline.ExitCode(err) != pipeline.ExitUsage {
		t.Fatalf("err = %v (exit %d), want ErrRefused, exit 2", err, pipeline.ExitCode(err))
	}
	if !strings.Contains(err.Error(), "the run of 1 repository was refused") || !strings.Contains(err.Error(), "repos-r01: usage error: the cassette does not fit") {
		t.Errorf("message %q", err)
	}
	if ex.refusals != 1 {
		t.Errorf("the refused job ran %d times, want once (not retried)", ex.refusals)
	}
	results, rerr := ReadResults(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	latest := Latest(results)
	if _, ok := latest["repos-r01"]; ok {
		t.Errorf("the refused repository has a result: %+v", latest["repos-r01"])
	}
	if latest["repos-r00"].Status != StatusSuccess {
		t.Errorf("the repository under way: %+v, want it finished and recorded", latest["repos-r00"])
	}
	if !slices.Contains(sum.Pending, "repos-r01") {
		t.Errorf("pending %v, want the refused repository among them", sum.Pending)
	}

	// The rerun, with the cause fixed, runs what has no result.
	fe := newFakeExec(func(string) behaviour { return edit })
	opts.Executor = fe
	sum, err = Run(t.Context(), opts)
	if err != nil || sum.Counts[StatusSuccess] != 4 || len(sum.Pending) != 0 {
		t.Fatalf("rerun: %v, counts %v, pending %v", err, sum.Counts, sum.Pending)
	}
	if calls, _, _ := fe.counts(); calls["repos-r00"] != 0 || calls["repos-r01"] != 1 {
		t.Errorf("rerun calls %v: want the refused one run and the recorded one left alone", calls)
	}
}

// TestRunRefusalStopsStarting: with one repository at a time, nothing
// after the refused one starts.
func TestRunRefusalStopsStarting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 4, "")
	ex := &refusingExec{fakeExec: newFakeExec(func(string) behaviour { return edit }), refuse: "repos-r01", refused: make(chan struct{})}
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, "out"), CacheDir: sharedCache(t), Concurrency: 1, Executor: ex})
	if pipeline.ExitCode(err) != pipeline.ExitUsage {
		t.Fatalf("err = %v, want exit 2", err)
	}
	if calls, _, _ := ex.counts(); len(calls) != 1 || calls["repos-r00"] != 1 {
		t.Errorf("calls %v, want only repos-r00 (before the refusal)", calls)
	}
	if len(sum.Results) != 1 || len(sum.Pending) != 3 {
		t.Errorf("results %d, pending %v; want 1 and 3", len(sum.Results), sum.Pending)
	}
}

// TestBatchTimeoutNamesTheBatchSpec: a repository stopped by the batch's
// limits.timeout says so, naming the batch spec; nobody gave --timeout.
// The model never answers; the timeout ends the
// run.
func TestBatchTimeoutNamesTheBatchSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 1, "limits: {timeout: 1s}\nretries: 0\n")
	write(t, filepath.Join(dir, "task.yaml"), leakTask)
	hang := llmtest.Turn{Text: "late"}.Reply()
	hang.Delay = time.Hour // cut off by the run's timeout
	srv := llmtest.NewServer(t, hang)
	out := filepath.Join(dir, "out")
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: filepath.Join(dir, "cache"), FailOn: []string{"none"},
		Executor: &PipelineExecutor{BaseURL: srv.URL(), APIKey: "k"}})
	if err != nil || len(sum.Results) != 1 {
		t.Fatalf("run: %v %+v", err, sum)
	}
	res := sum.Results[0]
	want := "the run's timeout (1s, limits.timeout in " + spec + ") was reached"
	if res.Status != StatusTimeout || res.ErrorClass != event.ClassTimeout || res.Error != want {
		t.Errorf("result %s %s %q, want timeout with %q", res.Status, res.ErrorClass, res.Error, want)
	}
}
