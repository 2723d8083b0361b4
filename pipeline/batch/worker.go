package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/seed43ef5acb/runner/internal/tempdir"
	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/runner/event"
)

// batchRun is one invocation of Run: the pool, the budget and the outputs.
type batchRun struct {
	opts     RunOptions
	spec     *Spec
	shard    Shard
	clone    *cloner
	workRoot string
	log      *resultsLog
	prog     *progress
	budget   *budget

	mu      sync.Mutex
	ran     int
	costRun *float64 // nil once a repository's cost is unknown
	// refused are the repositories the executor refused (exit code 2),
	// unrecorded; once there is one, no other repository starts
	refused []error
}

// refusedErr is a job the executor refused: its error matches exit code 2.
func refusedErr(err error) bool { return err != nil && pipeline.ExitCode(err) == pipeline.ExitUsage }

// refuse notes a refused repository.
func (b *batchRun) refuse(err error) {
	b.mu.Lock()
	b.refused = append(b.refused, err)
	b.mu.Unlock()
}

// refusals returns the refused repositories' errors.
func (b *batchRun) refusals() []error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.refused)
}

// budget is the batch's total cost cap (per shard: the total divided by
// the number of shards, since shards cannot see each other's spending).
type budget struct {
	mu    sync.Mutex
	cap   float64 // 0 = none
	spent float64
}

func (b *budget) add(c float64) {
	b.mu.Lock()
	b.spent += c
	b.mu.Unlock()
}

// left returns what may still be spent and whether the cap is reached.
func (b *budget) left() (float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cap <= 0 {
		return 0, false
	}
	return b.cap - b.spent, b.spent >= b.cap
}

func newBatchRun(opts RunOptions, spec *Spec, shard Shard, total int) (*batchRun, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = spec.Concurrency
	}
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(opts.Out, ".cache")
	}
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = DefaultRetryBackoff
	}
	if opts.TimeoutGrace <= 0 {
		opts.TimeoutGrace = DefaultTimeoutGrace
	}
	collectStale(opts.CacheDir)
	log, err := openResultsLog(opts.Out)
	if err != nil {
		return nil, err
	}
	capUSD := spec.Limits.TotalMaxCostUSD
	if shard.Count > 1 {
		capUSD /= float64(shard.Count)
	}
	return &batchRun{
		opts: opts, spec: spec, shard: shard,
		clone:    &cloner{dir: filepath.Join(opts.CacheDir, clonesDir), depth: spec.Clone.Depth, token: opts.GitHubToken, server: opts.GitHubServerURL},
		workRoot: filepath.Join(opts.CacheDir, "work"),
		log:      log,
		prog:     newProgress(opts.Progress, opts.TTY, total),
		budget:   &budget{cap: capUSD},
		costRun:  zeroCost(),
	}, nil
}

// collectStale removes the work trees and half-made clones of batches
// that were killed (their owner process is gone; internal/tempdir): a
// live shard sharing the cache keeps its own. A failure only leaves
// litter, so it is not an error.
func collectStale(cacheDir string) {
	_, _ = tempdir.Collect(filepath.Join(cacheDir, "work"), "*")
	_, _ = tempdir.Collect(filepath.Join(cacheDir, clonesDir), ".clone-*")
	_, _ = tempdir.Collect(cacheDir, ".clone-*") // an earlier version's
}

func (b *batchRun) close() error {
	b.prog.close()
	return b.log.Close()
}

func (b *batchRun) costThisRun() *float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.costRun
}

// run starts todo in order, at most Concurrency at a time. It stops
// starting repositories when ctx is cancelled or the executor refused one
// (exit code 2; they stay pending and a re-run resumes them), or when the
// total cost cap is reached (the rest are recorded as skipped). A refusal
// lets the repositories under way finish, and is run's error.
func (b *batchRun) run(parent context.Context, todo []Repo) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	sem := make(chan struct{}, b.opts.Concurrency)
	var wg sync.WaitGroup
	var skipped []Repo
	for i, r := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil || len(b.refusals()) > 0 {
			break
		}
		if _, over := b.budget.left(); over {
			<-sem
			skipped = todo[i:]
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := b.runRepo(ctx, r); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("batch stopped: %w", err)
	}
	if refused := b.refusals(); len(refused) > 0 {
		return refusedError(refused)
	}
	return b.recordSkipped(skipped)
}

// refusedError is run's error after refusals: it keeps exit code 2 and
// says that nothing was recorded for them and the rerun resumes.
func refusedError(refused []error) error {
	return fmt.Errorf("%w: the run of %s was refused (exit 2) as `runner exec` would refuse it, "+
		"so nothing was recorded for it and no further repository was started; fix the cause and run the batch again "+
		"(it resumes with the repositories that have no result): %w",
		ErrRefused, Repositories(len(refused)), errors.Join(refused...))
}

func (b *batchRun) recordSkipped(repos []Repo) error {
	for _, r := range repos {
		res := RepoResult{Repo: r.Source(), ID: r.ID, Status: StatusSkipped, Shard: b.shard.String(), CostUSD: zeroCost(),
			Error: "not started: the batch's total_max_cost_usd was reached", FinishedAt: time.Now().UTC()}
		if err := b.log.Append(res); err != nil {
			return err
		}
		b.prog.finished(res)
	}
	return nil
}

// runRepo runs one repository to a result and records it. It returns an
// error only when the result could not be recorded; a repository cut off
// by cancellation is not recorded at all.
func (b *batchRun) runRepo(ctx context.Context, r Repo) error {
	start := time.Now()
	at := &attempts{b: b, repo: r, cost: zeroCost()}
	o, err := at.runWithRetries(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if refusedErr(err) {
		b.refuse(err)
		return nil
	}
	res := RepoResult{
		Repo: r.Source(), ID: r.ID, CostUSD: at.cost, Steps: o.Steps, Attempts: at.n,
		DurationMS: time.Since(start).Milliseconds(), FilesChanged: o.FilesChanged,
		Error: o.Error, ErrorClass: o.ErrorClass, Commit: at.commit, Shard: b.shard.String(),
		FinishedAt: time.Now().UTC(),
	}
	res.PatchPath = b.relPatch(r.ID, o.PatchPath)
	if err != nil {
		res.Status, res.Error = StatusInfraFailed, err.Error()
		if res.ErrorClass == "" {
			res.ErrorClass = event.ClassInfra
		}
	} else {
		res.Status = statusOf(o)
	}
	b.budget.add(KnownCost(at.cost)) // an unknown cost cannot count against the cap
	b.mu.Lock()
	b.ran++
	b.costRun = AddCost(b.costRun, at.cost)
	b.mu.Unlock()
	res.scrub() // the progress line too
	if err := b.log.Append(res); err != nil {
		return err
	}
	b.prog.finished(res)
	return nil
}

// relPatch makes a patch path relative to the out dir.
func (b *batchRun) relPatch(id, p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Join(id, p))
	}
	out, err := filepath.Abs(b.opts.Out)
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(out, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// attempts runs one repository with retries of infrastructure failures.
type attempts struct {
	b      *batchRun
	repo   Repo
	n      int
	cost   *float64 // summed over the attempts that ran the executor; nil: unknown
	commit string
}

// errInfraOutcome marks an Outcome the executor classed as infrastructural.
type errInfraOutcome struct{ o Outcome }

func (e *errInfraOutcome) Error() string {
	return fmt.Sprintf("%s error: %s", e.o.ErrorClass, e.o.Error)
}

func (a *attempts) runWithRetries(ctx context.Context) (Outcome, error) {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = a.b.opts.RetryBackoff
	bo.MaxInterval = time.Minute
	o, err := backoff.Retry(ctx, func() (Outcome, error) {
		o, err := a.once(ctx)
		switch {
		case err != nil && (ctx.Err() != nil || refusedErr(err)):
			return o, backoff.Permanent(err)
		case err != nil:
			return o, err
		case o.Infra():
			return o, &errInfraOutcome{o: o}
		}
		return o, nil
	}, backoff.WithBackOff(bo), backoff.WithMaxTries(uint(a.b.spec.Retries)+1), backoff.WithMaxElapsedTime(0))
	var infra *errInfraOutcome
	if errors.As(err, &infra) {
		return infra.o, fmt.Errorf("after %s: %w", plural(a.n, "attempt", "attempts"), err)
	}
	if err != nil {
		return o, fmt.Errorf("after %s: %w", plural(a.n, "attempt", "attempts"), err)
	}
	return o, nil
}

// once is one attempt: a fresh work tree, then the executor.
func (a *attempts) once(ctx context.Context) (Outcome, error) {
	a.n++
	b := a.b
	r := a.repo
	outDir := filepath.Join(b.opts.Out, r.ID)
	if err := os.RemoveAll(outDir); err != nil {
		return Outcome{}, fmt.Errorf("clear %s: %w", outDir, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Outcome{}, fmt.Errorf("create %s: %w", outDir, err)
	}
	if err := os.MkdirAll(b.workRoot, 0o755); err != nil {
		return Outcome{}, fmt.Errorf("create work dir: %w", err)
	}
	// The attempt's directory, locked while this process lives (a killed
	// batch's are collected when the next starts): the work tree and its
	// snapshot store side by side, both gone when the attempt ends.
	dir, err := tempdir.New(b.workRoot, r.ID+"-")
	if err != nil {
		return Outcome{}, fmt.Errorf("create work tree dir: %w", err)
	}
	if b.opts.KeepWorkTrees {
		defer func() { _ = dir.Keep() }()
	} else {
		defer func() { _ = dir.Remove() }() // a leftover is collected by a later batch
	}
	work := filepath.Join(dir.Path(), "repo")
	if err := os.Mkdir(work, 0o755); err != nil {
		return Outcome{}, fmt.Errorf("create work tree dir: %w", err)
	}
	src := r.URL
	if src == "" {
		src = resolve(b.spec.Dir, r.Path)
	}
	if a.commit, err = b.clone.workTree(ctx, r, src, work); err != nil {
		return Outcome{}, err
	}
	return a.exec(ctx, Job{
		RepoID: r.ID, Repo: r, WorkDir: work, SnapshotDir: filepath.Join(dir.Path(), "snapshots"), Hidden: b.hiddenFrom(dir.Path()), SpecPath: b.spec.Task.Path, SpecInline: b.spec.Task.Inline,
		Inputs: r.Inputs, OutDir: outDir, Timeout: b.spec.Limits.Timeout,
		MaxCostUSD: b.jobBudget(), LimitsFrom: b.spec.Path, Attempt: a.n,
	})
}

// hiddenFrom lists what the sandbox of the repository whose attempt
// directory is own hides: the whole clone cache, as one path. It holds
// every entry (<cache>/clones/<id>.git: a repository's whole history, a
// committed .env among it; its own too, the work tree's objects are
// hard-linked copies) and the other attempts' directories under the work
// root (a command read another repository's .env with git
// --git-dir=../<id>.git show HEAD:.env). The sandbox keeps own's work tree
// reachable by hiding the other children of the directories that hold it
// (tools/sandbox computeCovers): the clones directory is one cover however
// many repositories the batch has, so each repository's cost does not grow
// with the batch. Attempt directories made later, by repositories running
// at the same time, are not hidden: run untrusted repositories with
// concurrency 1, or in batches of their own.
func (b *batchRun) hiddenFrom(string) []string {
	cache := b.opts.CacheDir
	if abs, err := filepath.Abs(cache); err == nil {
		cache = abs
	}
	return []string{cache}
}

// jobBudget is the per-repository limit, capped by what is left in total.
func (b *batchRun) jobBudget() float64 {
	per := b.spec.Limits.MaxCostUSD
	left, _ := b.budget.left()
	if b.budget.cap > 0 && (per == 0 || left < per) {
		return max(left, 0)
	}
	return per
}

// exec calls the executor under the per-repository deadline (plus grace).
func (a *attempts) exec(ctx context.Context, job Job) (Outcome, error) {
	jctx := ctx
	if job.Timeout > 0 {
		var cancel context.CancelFunc
		jctx, cancel = context.WithTimeout(ctx, job.Timeout+a.b.opts.TimeoutGrace)
		defer cancel()
	}
	o, err := a.b.opts.Executor.Exec(jctx, job)
	a.cost = AddCost(a.cost, o.CostUSD)
	if err == nil && o.ErrorClass == event.ClassUsage { // a refusal, as an outcome
		return o, fmt.Errorf("%s: %w: %s", job.RepoID, pipeline.ErrUsage, o.Error)
	}
	timedOut := ctx.Err() == nil && errors.Is(jctx.Err(), context.DeadlineExceeded)
	switch {
	case timedOut && (err != nil || o.Status == event.StatusCancelled):
		o.Status, o.Error = event.StatusTimeout, fmt.Sprintf("no result %s after the %s timeout", a.b.opts.TimeoutGrace, job.Timeout)
		return o, nil
	case err != nil:
		return o, fmt.Errorf("exec: %w", err)
	case o.Status == event.StatusCancelled && ctx.Err() == nil:
		return o, fmt.Errorf("exec: the run was cancelled while the batch was not")
	}
	return o, nil
}
