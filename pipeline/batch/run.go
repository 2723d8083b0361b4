package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// Defaults of RunOptions.
const (
	DefaultRetryBackoff = 5 * time.Second
	DefaultTimeoutGrace = 30 * time.Second
)

// RunOptions configure Run. SpecPath, Out and Executor are required.
type RunOptions struct {
	SpecPath string // the batch spec
	Out      string // the out dir (manifest.json, results.jsonl, <repo-id>/)
	// Shard and Shards select slice Shard (0-based) of Shards; Shards 0 or 1
	// runs everything. ResolveShard reads them from the flags and the CI
	// engine's variables.
	Shard, Shards int
	Concurrency   int      // repositories at once; 0 = the spec's "concurrency"
	Redo          bool     // run every repository again, even finished ones
	OnlyFailed    bool     // run only repositories whose last status is task_failed, infra_failed or timeout
	FailOn        []string // statuses that make Summary.Failed true; nil = DefaultFailOn
	Progress      io.Writer
	TTY           bool   // draw a live progress bar on Progress (it is a terminal)
	CacheDir      string // clone cache; "" = Out/.cache
	Executor      Executor
	// RetryBackoff is the first wait before retrying an infrastructure
	// failure; it doubles up to a minute. 0 = DefaultRetryBackoff.
	RetryBackoff time.Duration
	// TimeoutGrace is how long after the per-repository timeout the
	// executor's context is cancelled (the executor enforces the timeout
	// itself and needs time to write its final event). 0 = DefaultTimeoutGrace.
	TimeoutGrace  time.Duration
	KeepWorkTrees bool // leave work trees in CacheDir/work for debugging
	// GitHubToken (GITHUB_TOKEN, else GH_TOKEN; the caller reads the
	// environment) lets private repositories on the GitHub server be
	// cloned: it is sent as basic auth x-access-token:TOKEN, only to URLs
	// with GitHubServerURL's scheme and host. "" clones anonymously.
	GitHubToken string
	// GitHubServerURL is GITHUB_SERVER_URL; "" = github.DefaultServerURL.
	GitHubServerURL string
}

// Summary is the outcome of Run over the shard's repositories.
type Summary struct {
	Name     string
	Shard    string         // "I/N", "" when not sharded
	Total    int            // repositories in this shard
	Ran      int            // repositories finished by this invocation
	Resumed  int            // repositories left alone because they were already done
	Counts   map[Status]int // latest status of every repository of the shard
	CostUSD  *float64       // spent by this invocation; nil when a repository's cost is unknown
	Duration time.Duration
	Failed   bool         // some repository ended in a --fail-on status (see Err)
	FailOn   []Status     // the statuses that fail the batch
	Results  []RepoResult // latest result per repository of the shard, manifest order
	Pending  []string     // ids of the shard with no result (cancelled before they finished)
}

// Run runs the batch: check the batch spec (CheckSources, CheckTask with the executor's
// JobChecker; its problems are SpecErrors, exit code 2, and nothing is
// written), freeze the manifest, take the shard, skip what is
// done (unless Redo or OnlyFailed), run the rest Concurrency at a time,
// and append each result to results.jsonl as it finishes. Failed
// repositories are not an error (see Summary.Failed); an error means the
// batch could not run, ctx was cancelled, or the executor refused a
// repository (ErrRefused, exit code 2); the summary then covers what
// finished, and re-running resumes.
func Run(ctx context.Context, opts RunOptions) (Summary, error) {
	start := time.Now()
	failOn, err := opts.validate()
	if err != nil {
		return Summary{}, err
	}
	spec, err := LoadSpec(opts.SpecPath)
	if err != nil {
		return Summary{}, err
	}
	if err := CheckSources(spec); err != nil {
		return Summary{}, err
	}
	built, err := BuildManifest(spec)
	if err != nil {
		return Summary{}, err
	}
	if err := preflight(ctx, opts.Executor); err != nil {
		return Summary{}, err
	}
	// Before anything is written or cloned: a job exec would refuse is the
	// batch spec's problem (exit 2), never a repository's result.
	checker, _ := opts.Executor.(JobChecker)
	if err := CheckTask(ctx, spec, checker); err != nil {
		return Summary{}, err
	}
	m, err := FreezeManifest(opts.Out, built)
	if err != nil {
		return Summary{}, err
	}
	shard := Shard{Index: opts.Shard, Count: opts.Shards}
	repos := shardRepos(m, shard)
	prior, err := ReadResults(opts.Out)
	if err != nil {
		return Summary{}, err
	}
	todo, kept := selectRepos(repos, Latest(prior), opts.Redo, opts.OnlyFailed)
	if c, ok := opts.Executor.(RepoChecker); ok {
		if err := c.CheckRepos(todo); err != nil {
			return Summary{}, fmt.Errorf("%w: %w", ErrPreflight, err)
		}
	}
	b, err := newBatchRun(opts, spec, shard, len(todo))
	if err != nil {
		return Summary{}, err
	}
	b.budget.spent = keptCost(kept, Latest(prior))
	runErr := b.run(ctx, todo)
	if err := b.close(); err != nil && runErr == nil {
		runErr = err
	}
	sum, err := summarize(opts.Out, m.Name, shard, repos, failOn)
	if err != nil {
		return sum, errors.Join(runErr, err)
	}
	sum.Ran, sum.Resumed, sum.CostUSD, sum.Duration = b.ran, len(kept), b.costThisRun(), time.Since(start)
	if err := WriteSummary(filepath.Join(opts.Out, SummaryFile), m.Name, sum.Results, sum.Pending); err != nil && runErr == nil {
		runErr = err
	}
	return sum, runErr
}

// preflight runs the executor's Preflight check, when it has one.
func preflight(ctx context.Context, e Executor) error {
	p, ok := e.(Preflighter)
	if !ok {
		return nil
	}
	if err := p.Preflight(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	return nil
}

func (o *RunOptions) validate() ([]Status, error) {
	if o.Executor == nil {
		return nil, ErrNoExecutor
	}
	if o.SpecPath == "" || o.Out == "" {
		return nil, fmt.Errorf("batch run: the batch spec and the out dir are required")
	}
	if o.Shards > 1 || o.Shard != 0 {
		if err := (Shard{Index: o.Shard, Count: o.Shards}).Validate(); err != nil {
			return nil, err
		}
	}
	if o.Redo && o.OnlyFailed {
		return nil, fmt.Errorf("batch run: --redo and --only-failed exclude each other")
	}
	failOn := o.FailOn
	if failOn == nil {
		return DefaultFailOn(), nil
	}
	return ParseStatuses(failOn)
}

func shardRepos(m *Manifest, s Shard) []Repo {
	idx := ShardIndices(len(m.Repos), s)
	out := make([]Repo, len(idx))
	for i, j := range idx {
		out[i] = m.Repos[j]
	}
	return out
}

// selectRepos splits the shard into the repositories to run and those kept
// as they are.
func selectRepos(repos []Repo, latest map[string]RepoResult, redo, onlyFailed bool) (todo, kept []Repo) {
	for _, r := range repos {
		last, seen := latest[r.ID]
		run := !seen || !last.Status.Final()
		switch {
		case redo:
			run = true
		case onlyFailed:
			run = seen && last.Status.Failed()
		}
		if run {
			todo = append(todo, r)
		} else {
			kept = append(kept, r)
		}
	}
	return todo, kept
}

func keptCost(kept []Repo, latest map[string]RepoResult) float64 {
	var sum float64
	for _, r := range kept {
		sum += KnownCost(latest[r.ID].CostUSD)
	}
	return sum
}

// summarize reads back the shard's latest results.
func summarize(out, name string, shard Shard, repos []Repo, failOn []Status) (Summary, error) {
	all, err := ReadResults(out)
	if err != nil {
		return Summary{}, err
	}
	latest := Latest(all)
	s := Summary{Name: name, Shard: shard.String(), Total: len(repos), Counts: map[Status]int{}}
	for _, r := range repos {
		res, ok := latest[r.ID]
		if !ok {
			s.Pending = append(s.Pending, r.ID)
			continue
		}
		s.Results = append(s.Results, res)
		s.Counts[res.Status]++
	}
	s.Failed, s.FailOn = ShouldFail(s.Results, failOn), failOn
	return s, nil
}
