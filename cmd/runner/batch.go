package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// BatchCmd groups the batch commands. Their names and flags are a
// contract (workflows, Kubernetes Jobs): keep them.
type BatchCmd struct {
	Run     BatchRunCmd     `cmd:"" help:"Run the batch's task over its repositories (resumable; one shard with --shard)."`
	Merge   BatchMergeCmd   `cmd:"" help:"Merge shard out dirs into one (results.jsonl, summary.md)."`
	Publish BatchPublishCmd `cmd:"" help:"Open pull requests from the stored patches, serially and paced."`
	Report  BatchReportCmd  `cmd:"" help:"Report on out dirs: one self-contained HTML page, Markdown or JSON; several nights as a trend."`
	Export  BatchExportCmd  `cmd:"" help:"Export the patches for other tools: SWE-bench predictions (JSONL)."`
}

// BatchRunCmd is `runner batch run BATCH.yaml --out DIR`.
type BatchRunCmd struct {
	Spec        string   `arg:"" name:"BATCH.yaml" help:"Batch spec file; its paths are relative to it."`
	Out         string   `help:"Out dir: manifest.json, results.jsonl, summary.md and one dir per repository." required:"" placeholder:"DIR"`
	Shard       string   `help:"Run slice I (0-based) of N of the manifest; auto: I and N from GitLab CI ($$CI_NODE_INDEX, 1-based, $$CI_NODE_TOTAL) or Buildkite ($$BUILDKITE_PARALLEL_JOB, $$BUILDKITE_PARALLEL_JOB_COUNT)." placeholder:"I/N|auto"`
	Shards      int      `help:"Number of shards; the index comes from $$JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), $$CI_NODE_INDEX or $$BUILDKITE_PARALLEL_JOB." placeholder:"N"`
	Concurrency int      `help:"Repositories at once (default: the spec's concurrency)." placeholder:"N"`
	Redo        bool     `help:"Run every repository again, even finished ones." xor:"select"`
	OnlyFailed  bool     `name:"only-failed" help:"Run only repositories whose last status is task_failed, infra_failed or timeout." xor:"select"`
	FailOn      []string `name:"fail-on" help:"Statuses that make the batch exit 1 (default task_failed,infra_failed; none: never)." placeholder:"STATUS,..." sep:"none"`
	CacheDir    string   `name:"cache-dir" help:"Clone cache, shareable between shards and runs; refreshed on first use by each run (default <out>/.cache)." placeholder:"DIR"`
	Model       string   `help:"Model name; overrides the task's model." env:"RUNNER_MODEL" placeholder:"NAME"`
	BaseURL     string   `name:"base-url" help:"OpenAI-compatible base URL, /chat/completions is appended: e.g. http://localhost:11434/v1 (default https://api.openai.com/v1); the API key comes from $$OPENAI_API_KEY only." env:"OPENAI_BASE_URL" placeholder:"URL"`
	MaxSteps    int      `name:"max-steps" help:"Override the task's limits.max_steps (0 or omitted: the spec's)." placeholder:"N"`
	Replay      string   `help:"Answer the model calls with no network: from a cassette FILE for every repository, or from DIR/<repo-id>.jsonl as --record writes them." placeholder:"FILE|DIR" type:"path" xor:"cassette"`
	Record      string   `help:"Record each repository's model session to DIR/<repo-id>.jsonl (for --replay DIR)." placeholder:"DIR" type:"path" xor:"cassette"`
	QuietFlag   `embed:""`
}

// Run runs the batch and exits 1 when a repository ended in a --fail-on
// status.
func (c *BatchRunCmd) Run(ctx context.Context, streams Streams, env Environ, log *slog.Logger) (err error) {
	shard, err := batch.ResolveShard(c.Shard, c.Shards, env.Get)
	if err != nil {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
	}
	statuses, err := failOnStatuses(c.FailOn)
	if err != nil {
		return err
	}
	failOn := make([]string, len(statuses))
	for i, s := range statuses {
		failOn[i] = string(s)
	}
	if c.Replay != "" {
		if _, err := os.Stat(c.Replay); err != nil {
			return replayErr(c.Replay, err, "a cassette FILE for every repository, or a DIR of <repo-id>.jsonl cassettes "+
				"(record them with runner batch run BATCH.yaml --out NEW-DIR --record DIR)")
		}
	}
	ghEnv, err := github.LoadEnv(env.Map())
	if err != nil {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
	}
	tel, log, stop := startTelemetry(ctx, env, log)
	defer stop()
	endBatch := tel.StartBatch(filepath.Base(c.Spec))
	defer func() {
		failure := ""
		if err != nil {
			failure = err.Error()
		}
		endBatch(failure)
	}()
	sum, err := batch.Run(ctx, batch.RunOptions{
		GitHubToken: ghEnv.Token, GitHubServerURL: ghEnv.ServerURL,
		SpecPath: c.Spec, Out: c.Out, Shard: shard.Index, Shards: shard.Count,
		Concurrency: c.Concurrency, Redo: c.Redo, OnlyFailed: c.OnlyFailed, FailOn: failOn,
		Progress: c.progress(streams.Stderr), TTY: !c.Quiet && isTerminal(streams.Stderr), CacheDir: c.CacheDir,
		Executor: &batch.PipelineExecutor{
			Telemetry: tel, Logger: log, Model: c.Model, BaseURL: c.BaseURL, APIKey: env.Get("OPENAI_API_KEY"), Environ: env,
			Replay: c.Replay, Record: c.Record, MaxSteps: c.MaxSteps, Stderr: streams.Stderr,
		},
	})
	if err != nil {
		return err
	}
	progress := c.progress(streams.Stderr)
	if msg := c.nothingToDo(sum); msg != "" {
		fmt.Fprintf(progress, "nothing to do: %s\n", msg)
	}
	fmt.Fprintf(progress, "Results: %s\n", c.Out)
	return sum.Err()
}

// nothingToDo says why a run that ran no repository had nothing to do;
// "" when it ran some, or some are still pending.
func (c *BatchRunCmd) nothingToDo(sum batch.Summary) string {
	if sum.Ran > 0 || len(sum.Pending) > 0 || sum.Resumed == 0 || sum.Resumed < sum.Total {
		return ""
	}
	if c.OnlyFailed {
		return "no repository ended task_failed, infra_failed or timeout (use --redo to run them all again)"
	}
	verb := "have"
	if sum.Resumed == 1 {
		verb = "has"
	}
	return fmt.Sprintf("%s already %s a final status (use --redo or --only-failed)", repositories(sum.Resumed), verb)
}

// repositories is "1 repository", "2 repositories".
func repositories(n int) string { return batch.Repositories(n) }

// BatchMergeCmd is `runner batch merge DIR... --out DIR`.
type BatchMergeCmd struct {
	Dirs      []string `arg:"" name:"DIR" help:"Shard out dirs of one batch." type:"existingdir"`
	Out       string   `help:"Merged out dir." required:"" placeholder:"DIR"`
	FailOn    []string `name:"fail-on" help:"Statuses that make the merge exit 1 (default task_failed,infra_failed; none: never)." placeholder:"STATUS,..." sep:"none"`
	QuietFlag `embed:""`
}

// Run merges the dirs and prints what it found on stderr. It fails with
// exit 3 when repositories of the manifest have no result, else with exit
// 1 when a merged result has a --fail-on status: the shards run with
// --fail-on none and the merge decides.
func (c *BatchMergeCmd) Run(ctx context.Context, streams Streams) error {
	failOn, err := failOnStatuses(c.FailOn)
	if err != nil {
		return err
	}
	rep, err := batch.Merge(ctx, c.Dirs, c.Out)
	if rep != nil {
		for _, p := range rep.Problems() {
			fmt.Fprintf(streams.Stderr, "runner: %s\n", p)
		}
	}
	if err != nil || rep == nil {
		return err
	}
	fmt.Fprintf(c.progress(streams.Stderr), "Results: %s\n", c.Out)
	sum := batch.Summary{FailOn: failOn, Failed: batch.ShouldFail(rep.Results, failOn), Counts: map[batch.Status]int{}}
	for _, r := range rep.Results {
		sum.Counts[r.Status]++
	}
	return sum.Err()
}

// failOnStatuses parses --fail-on; nil gives the default.
func failOnStatuses(values []string) ([]batch.Status, error) {
	if values == nil {
		return batch.DefaultFailOn(), nil
	}
	statuses, err := batch.ParseStatuses(values)
	if err != nil {
		return nil, fmt.Errorf("%w: --fail-on: %w", pipeline.ErrUsage, err)
	}
	return statuses, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// BatchPublishCmd is `runner batch publish DIR`.
type BatchPublishCmd struct {
	Dir        string        `arg:"" name:"DIR" help:"A batch run or merge out dir." type:"existingdir"`
	Interval   time.Duration `help:"Least time between two writes to GitHub (default ${default})." default:"1s" placeholder:"DURATION"`
	MaxPerHour int           `name:"max-per-hour" help:"Most pull requests opened in any rolling hour (0: no cap)." placeholder:"N"`
	StopAtCap  bool          `name:"stop-at-cap" help:"Stop (exit 3) at --max-per-hour instead of waiting; a later run resumes."`
	CacheDir   string        `name:"cache-dir" help:"Clone cache of batch run to take base commits from (default <DIR>/.cache)." placeholder:"DIR"`
	Draft      bool          `help:"Open draft pull requests (when the task spec has no github.pull_request)."`
	Labels     []string      `help:"Labels to add (when the task spec has no github.pull_request)." placeholder:"LABEL"`
	QuietFlag  `embed:""`
}

// Run publishes the successful repositories of the dir; the token comes
// from $GITHUB_TOKEN or $GH_TOKEN, the server from $GITHUB_SERVER_URL and
// $GITHUB_API_URL.
func (c *BatchPublishCmd) Run(ctx context.Context, streams Streams, env Environ) error {
	ghEnv, err := github.LoadEnv(env.Map())
	if err != nil {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
	}
	if ghEnv.Token == "" {
		return fmt.Errorf("%w: publishing needs a token: set GITHUB_TOKEN or GH_TOKEN", pipeline.ErrUsage)
	}
	client, err := github.NewClient(ghEnv, runnerHTTPClient())
	if err != nil {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
	}
	return batch.Publish(ctx, c.Dir, batch.PublishOptions{
		Publisher: &batch.GitHubPublisher{
			Dir: c.Dir, Client: client, ServerURL: ghEnv.ServerURL, Token: ghEnv.Token,
			CacheDir: c.CacheDir, Draft: c.Draft, Labels: c.Labels,
		},
		MinInterval: c.Interval, MaxPerHour: c.MaxPerHour, StopAtHourlyCap: c.StopAtCap,
		Progress: c.progress(streams.Stderr), Failures: streams.Stderr,
	})
}

// replayErr is the error of a --replay path that cannot be read: a missing
// one says so and what to give (want).
func replayErr(path string, err error, want string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: --replay %s: no such file or directory: give %s", pipeline.ErrUsage, path, want)
	}
	return fmt.Errorf("%w: --replay: %w", pipeline.ErrUsage, err)
}
