package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/pipeline"
)

// script20 is the behaviour of each of the 20 repositories of the
// end-to-end test and the status each must end with.
var script20 = []struct {
	b    behaviour
	want Status
}{
	{edit, StatusSuccess}, {noop, StatusNoChange}, {taskFail, StatusTaskFailed}, {flaky, StatusSuccess},
	{broken, StatusInfraFailed}, {edit, StatusSuccess}, {slow, StatusTimeout}, {overBudget, StatusBudgetExceeded},
	{goErrAlways, StatusInfraFailed}, {edit, StatusSuccess}, {noop, StatusNoChange}, {edit, StatusSuccess},
	{taskFail, StatusTaskFailed}, {edit, StatusSuccess}, {flaky, StatusSuccess}, {edit, StatusSuccess},
	{noop, StatusNoChange}, {edit, StatusSuccess}, {edit, StatusSuccess}, {edit, StatusSuccess},
}

func scriptByID(id string) behaviour {
	var i int
	if _, err := fmt.Sscanf(strings.TrimPrefix(id, "repos-r"), "%d", &i); err != nil || i >= len(script20) {
		return edit
	}
	return script20[i].b
}

func TestRunEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 20, "limits: {timeout: 3s}\nretries: 2\n")
	out := filepath.Join(dir, "out")
	fe := newFakeExec(scriptByID)
	fe.gate, fe.gateN = make(chan struct{}), 3
	var progress bytes.Buffer
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Concurrency: 3, Executor: fe,
		Progress: &progress, RetryBackoff: time.Millisecond, TimeoutGrace: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	calls, _, maxIn := fe.counts()
	if maxIn != 3 {
		t.Errorf("max in flight = %d, want 3 (the concurrency)", maxIn)
	}
	results, err := ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 20 {
		t.Fatalf("results.jsonl has %d lines, want 20", len(results))
	}
	latest := Latest(results)
	for i, s := range script20 {
		id := fmt.Sprintf("repos-r%02d", i)
		r := latest[id]
		if r.Status != s.want {
			t.Errorf("%s (%s): status %s, want %s (error %q)", id, s.b, r.Status, s.want, r.Error)
		}
		checkResult(t, out, r, s.b, calls[id])
	}
	wantCounts := map[Status]int{}
	for _, s := range script20 {
		wantCounts[s.want]++
	}
	if diff := cmp.Diff(wantCounts, sum.Counts); diff != "" {
		t.Errorf("summary counts (-want +got):\n%s", diff)
	}
	if err := sum.Err(); !errors.Is(err, ErrBatchFailed) || !errors.Is(err, pipeline.ErrTaskFailed) ||
		err.Error() != "batch failed: 4 repositories ended in a --fail-on status (task_failed: 2, infra_failed: 2)" {
		t.Errorf("exit decision: %v", err)
	}
	if !sum.Failed || sum.Total != 20 || sum.Ran != 20 || len(sum.Pending) != 0 {
		t.Errorf("summary: failed %v total %d ran %d pending %v", sum.Failed, sum.Total, sum.Ran, sum.Pending)
	}
	if got := strings.Count(progress.String(), "\n"); got != 20 {
		t.Errorf("progress has %d lines, want 20:\n%s", got, progress.String())
	}
	if _, err := os.Stat(filepath.Join(out, SummaryFile)); err != nil {
		t.Error(err)
	}
	checkCacheClean(t, out)
}

// checkResult checks one repository's recorded result against its script.
func checkResult(t *testing.T, out string, r RepoResult, b behaviour, calls int) {
	t.Helper()
	wantAttempts := map[behaviour]int{flaky: 2, broken: 3, goErrAlways: 3}[b]
	if wantAttempts == 0 {
		wantAttempts = 1
	}
	if r.Attempts != wantAttempts || calls != wantAttempts {
		t.Errorf("%s: attempts %d, executor calls %d, want %d", r.ID, r.Attempts, calls, wantAttempts)
	}
	if len(r.Commit) != 40 || r.Repo != "repos/"+strings.TrimPrefix(r.ID, "repos-") {
		t.Errorf("%s: commit %q repo %q", r.ID, r.Commit, r.Repo)
	}
	var stored RepoResult
	if err := readJSON(filepath.Join(out, r.ID, RepoResultFile), &stored); err != nil {
		t.Errorf("%s: %v", r.ID, err)
	} else if diff := cmp.Diff(r, stored); diff != "" {
		t.Errorf("%s: batch-result.json differs from results.jsonl (-line +file):\n%s", r.ID, diff)
	}
	if r.Status == StatusSuccess {
		if r.PatchPath != r.ID+"/changes.patch" || r.FilesChanged != 1 {
			t.Errorf("%s: patch %q files %d", r.ID, r.PatchPath, r.FilesChanged)
		}
		if _, err := os.Stat(filepath.Join(out, r.PatchPath)); err != nil {
			t.Errorf("%s: %v", r.ID, err)
		}
		if got := readFile(t, filepath.Join(out, r.ID, "result.json")); got != `{"status":"success"}` {
			t.Errorf("%s: the executor's result.json was replaced: %s", r.ID, got)
		}
	}
	if (r.Status == StatusInfraFailed || r.Status == StatusTaskFailed || r.Status == StatusTimeout) && r.Error == "" {
		t.Errorf("%s: %s without an error message", r.ID, r.Status)
	}
}

// checkCacheClean checks that runs never wrote into the cached clones and
// that no work tree was left behind.
func checkCacheClean(t *testing.T, out string) {
	t.Helper()
	cache := filepath.Join(out, ".cache")
	entries, err := os.ReadDir(filepath.Join(cache, "work"))
	if err != nil || len(entries) != 0 {
		t.Errorf("work trees left behind: %v %v", entries, err)
	}
	for _, name := range []string{"index", "step0.txt"} {
		matches, _ := filepath.Glob(filepath.Join(cache, clonesDir, "*.git", name))
		if len(matches) > 0 {
			t.Errorf("cache was written to: %v", matches)
		}
	}
}

func TestRunResumeAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 20, "")
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const k = 7
	first := newFakeExec(func(string) behaviour { return edit })
	first.delay = 2 * time.Millisecond
	_, err := Run(ctx, RunOptions{SpecPath: spec, Out: out, Concurrency: 2, Executor: first,
		Progress: &cancelAfter{n: k, cancel: cancel}, CacheDir: sharedCache(t)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: err = %v, want context.Canceled", err)
	}
	before, err := ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < k || len(before) >= 20 {
		t.Fatalf("first run recorded %d results, want ≥ %d and < 20", len(before), k)
	}
	// A kill during a write leaves a torn last line; it must not matter.
	appendRaw(t, filepath.Join(out, ResultsFile), `{"repo":"repos/r19","id":"repos-r1`)

	second := newFakeExec(func(string) behaviour { return edit })
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Concurrency: 2, Executor: second, CacheDir: sharedCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 20 || len(Latest(after)) != 20 {
		t.Fatalf("after resume: %d lines for %d repos, want 20 for 20", len(after), len(Latest(after)))
	}
	if diff := cmp.Diff(before, after[:len(before)]); diff != "" {
		t.Errorf("finished results changed (-before +after):\n%s", diff)
	}
	calls, _, _ := second.counts()
	for _, r := range before {
		if calls[r.ID] != 0 {
			t.Errorf("%s finished in the first run but ran again", r.ID)
		}
	}
	if sum.Resumed != len(before) || sum.Ran != 20-len(before) {
		t.Errorf("summary: resumed %d ran %d, want %d and %d", sum.Resumed, sum.Ran, len(before), 20-len(before))
	}
}

// cancelAfter is a progress writer that cancels after n lines (n recorded results).
type cancelAfter struct {
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n -= bytes.Count(p, []byte("\n")); c.n <= 0 {
		c.cancel()
	}
	return len(p), nil
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
