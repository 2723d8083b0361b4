package batch

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRunRedoAndOnlyFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 4, "retries: 0\n")
	out := filepath.Join(dir, "out")
	script := map[string]behaviour{"repos-r00": edit, "repos-r01": taskFail, "repos-r02": broken, "repos-r03": noop}
	run := func(opts RunOptions) map[string]int {
		t.Helper()
		fe := newFakeExec(func(id string) behaviour { return script[id] })
		opts.SpecPath, opts.Out, opts.Executor, opts.RetryBackoff, opts.CacheDir = spec, out, fe, time.Millisecond, sharedCache(t)
		if _, err := Run(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		calls, _, _ := fe.counts()
		return calls
	}
	run(RunOptions{})
	if calls := run(RunOptions{}); len(calls) != 0 {
		t.Errorf("a plain re-run ran %v, want nothing", calls)
	}
	script["repos-r01"] = edit
	if diff := cmp.Diff(map[string]int{"repos-r01": 1, "repos-r02": 1}, run(RunOptions{OnlyFailed: true})); diff != "" {
		t.Errorf("--only-failed ran (-want +got):\n%s", diff)
	}
	if got := Latest(mustRead(t, out))["repos-r01"].Status; got != StatusSuccess {
		t.Errorf("r01 after --only-failed: %s", got)
	}
	if calls := run(RunOptions{Redo: true}); len(calls) != 4 {
		t.Errorf("--redo ran %v, want all 4", calls)
	}
	if _, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Executor: newFakeExec(nil), Redo: true, OnlyFailed: true}); err == nil {
		t.Error("--redo with --only-failed: no error")
	}
}

func TestRunTotalBudgetSkips(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 6, "limits: {max_cost_usd: 0.5, total_max_cost_usd: 0.25}\n")
	out := filepath.Join(dir, "out")
	fe := newFakeExec(func(string) behaviour { return edit })
	fe.cost = 0.1
	var budgets []float64
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Executor: budgetSpy{fe, &budgets}, Concurrency: 1, CacheDir: sharedCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	// 0.1 + 0.1 + 0.1 ≥ 0.25: three ran (the third with what was left), three skipped.
	if sum.Counts[StatusSuccess] != 3 || sum.Counts[StatusSkipped] != 3 {
		t.Errorf("counts %v, want 3 success and 3 skipped", sum.Counts)
	}
	want := []float64{0.25, 0.15, 0.05}
	if diff := cmp.Diff(want, budgets, cmpFloat()); diff != "" {
		t.Errorf("per-job budgets (-want +got):\n%s", diff)
	}
	// skipped is not final: a re-run with more budget runs them.
	calls := newFakeExec(func(string) behaviour { return edit })
	write(t, spec, strings.Replace(readFile(t, spec), "total_max_cost_usd: 0.25", "total_max_cost_usd: 10", 1))
	if _, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Executor: calls}); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := calls.counts(); len(c) != 3 {
		t.Errorf("re-run after skip ran %v, want the 3 skipped", c)
	}
}

type budgetSpy struct {
	*fakeExec
	budgets *[]float64
}

func (b budgetSpy) Exec(ctx context.Context, job Job) (Outcome, error) {
	*b.budgets = append(*b.budgets, job.MaxCostUSD)
	return b.fakeExec.Exec(ctx, job)
}

func TestParseStatusesAndShouldFail(t *testing.T) {
	t.Parallel()
	got, err := ParseStatuses([]string{"task_failed, timeout", "skipped"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Status{StatusTaskFailed, StatusTimeout, StatusSkipped}, got); diff != "" {
		t.Error(diff)
	}
	if none, err := ParseStatuses([]string{"none"}); err != nil || none == nil || len(none) != 0 {
		t.Errorf("none: %v %v", none, err)
	}
	for _, bad := range [][]string{{"failed"}, {""}, {"task_failed,"}, {"none,task_failed"}, {"none", "timeout"}} {
		if _, err := ParseStatuses(bad); !errors.Is(err, ErrBadStatus) {
			t.Errorf("ParseStatuses(%q) = %v, want ErrBadStatus", bad, err)
		}
	}
	results := []RepoResult{{Status: StatusSuccess}, {Status: StatusTimeout}}
	tests := []struct {
		failOn []Status
		want   bool
	}{
		{DefaultFailOn(), false},
		{[]Status{StatusTimeout}, true},
		{[]Status{}, false},
	}
	for _, tt := range tests {
		if got := ShouldFail(results, tt.failOn); got != tt.want {
			t.Errorf("ShouldFail(%v) = %v, want %v", tt.failOn, got, tt.want)
		}
	}
}

func TestProgressTTY(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 3, "")
	var buf safeBuffer
	fe := newFakeExec(func(string) behaviour { return edit })
	if _, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, "out"), Executor: fe, Progress: &buf, TTY: true, CacheDir: sharedCache(t)}); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{"repos-r00  success", "repos-r02  success", "batch "} {
		if !strings.Contains(s, want) {
			t.Errorf("progress lacks %q:\n%q", want, s)
		}
	}
}

func TestFormatLine(t *testing.T) {
	t.Parallel()
	got := formatLine(3, 20, RepoResult{ID: "x", Status: StatusTaskFailed, CostUSD: usd(0.12), Steps: 5, DurationMS: 1234, Error: "checks\nfailed"})
	want := "[ 3/20] x  task_failed  $0.1200  5 steps  0 files  1.234s  checks failed"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = formatLine(1, 9, RepoResult{ID: "y", Status: StatusSuccess, CostUSD: usd(0), Steps: 1, FilesChanged: 1, DurationMS: 5})
	if want := "[1/9] y  success  $0.0000  1 step  1 file  5ms"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// An unknown cost (a model without a price) is never shown as $0.
	got = formatLine(2, 9, RepoResult{ID: "z", Status: StatusSuccess, Steps: 1, DurationMS: 5})
	if want := "[2/9] z  success  cost unknown  1 step  0 files  5ms"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRunCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 3, "")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	fe := newFakeExec(func(string) behaviour { return edit })
	sum, err := Run(ctx, RunOptions{SpecPath: spec, Out: filepath.Join(dir, "out"), Executor: fe, CacheDir: sharedCache(t)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if calls, _, _ := fe.counts(); len(calls) != 0 || len(sum.Results) != 0 || len(sum.Pending) != 3 {
		t.Errorf("calls %v, results %d, pending %v", calls, len(sum.Results), sum.Pending)
	}
}

// A run that reports "cancelled" while the batch was not cancelled crashed
// somewhere: it is an infrastructure failure, retried.
func TestRunUnexpectedCancelIsInfra(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 1, "retries: 1\n")
	calls := 0
	ex := execFunc(func(context.Context, Job) (Outcome, error) {
		calls++
		return Outcome{Status: "cancelled"}, nil
	})
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, "out"), Executor: ex,
		RetryBackoff: time.Millisecond, CacheDir: sharedCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if r := sum.Results[0]; r.Status != StatusInfraFailed || r.Attempts != 2 || calls != 2 || !strings.Contains(r.Error, "cancelled") {
		t.Errorf("result %+v after %d calls", r, calls)
	}
}
