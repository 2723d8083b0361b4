package batch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/internal/copytree"
	"github.com/seed43ef5acb/runner/internal/telemetry"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// Files the pipeline executor adds to out/<repo-id>/.
const (
	// TaskFile is the task spec the repository ran with: a copy of the
	// batch's task file or the inline task. Publishing reads it.
	TaskFile = "task.yaml"
	// TreeDir holds the files of the final patch as the run left them
	// (deleted files are absent), so that publishing can rebuild the
	// patched tree without applying the patch text.
	TreeDir = "tree"
)

// PipelineExecutor is the Executor of `runner batch run`: it runs each job
// with the exec pipeline (pipeline.Exec), as `runner exec TASK --repo
// WORKDIR --out OUTDIR --quiet` would, with the job's inputs, timeout and
// cost cap as options, and builds the Outcome from pipeline.Result. It is
// safe for concurrent use: it holds only configuration.
type PipelineExecutor struct {
	// Telemetry exports each repository's run (nil: none).
	Telemetry *telemetry.Telemetry
	// Logger receives each run's diagnostics, with the repository's id
	// as "repo" (nil: discarded).
	Logger  *slog.Logger
	Model   string   // overrides the task's model ("" = the spec's)
	BaseURL string   // OpenAI-compatible endpoint ("" = the default)
	APIKey  string   // the provider key (from OPENAI_API_KEY)
	Environ []string // the process environment, "KEY=VALUE"
	// Replay answers the repositories' model calls offline: a cassette
	// file answers every repository (each run replays it from the start);
	// a directory holds one cassette per repository, <repo-id>.jsonl, as
	// Record writes them.
	Replay string
	// Record writes each repository's model session to the directory
	// Record/<repo-id>.jsonl (created if needed; a retried attempt
	// overwrites its own), for a later Replay of the same batch.
	Record   string
	MaxSteps int // overrides limits.max_steps; 0 = the spec's
	// Backoff shapes each run's retries of retryable model errors; zero
	// fields take runner's defaults.
	Backoff runner.Backoff
	// Stderr receives the messages of runs that fail before they start;
	// nil discards them (results.jsonl records the error anyway).
	Stderr io.Writer
}

// Exec runs job. Exit code 2 (bad usage, an invalid spec or inputs, a
// --replay cassette that does not fit: what Check did not foresee) is a
// Go error that keeps the exit code: Run records nothing for the
// repository and stops (see Run); exit code 3 is an infrastructure
// failure, which Run retries and records as infra_failed when retries run
// out: a Go error when the run left no result, else an Outcome with the
// run's error class (Outcome.Infra; a class it does not know comes with a
// Go error). The one exception is a run whose context window overflowed
// (class "context-overflow"): retrying would repeat it, so it is a task
// failure.
func (e *PipelineExecutor) Exec(ctx context.Context, job Job) (Outcome, error) {
	task, err := jobSpec(job)
	if err != nil {
		return Outcome{}, err
	}
	stderr := e.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	var log *slog.Logger
	if e.Logger != nil {
		log = e.Logger.With("repo", job.RepoID)
	}
	replay, record, err := e.cassettes(job)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", job.RepoID, err)
	}
	res, runErr := pipeline.Exec(ctx, pipeline.ExecOptions{
		Task: task, Repo: job.WorkDir, SnapshotDir: job.SnapshotDir, Hidden: job.Hidden, Out: job.OutDir, Inputs: job.Inputs,
		Model: e.Model, BaseURL: e.BaseURL, APIKey: e.APIKey, Environ: e.Environ,
		Replay: replay, Record: record, MaxSteps: e.MaxSteps, Timeout: job.Timeout, MaxCostUSD: job.MaxCostUSD,
		LimitsFrom: job.LimitsFrom,
		Backoff:    e.Backoff, Quiet: true, Stdout: io.Discard, Stderr: stderr, Telemetry: e.Telemetry,
		Logger: log,
	})
	code := pipeline.ExitCode(runErr)
	if code == pipeline.ExitUsage { // refused, before or after its out dir was made
		return Outcome{}, fmt.Errorf("%s: %w", job.RepoID, runErr)
	}
	if !res.Reported {
		switch {
		case runErr != nil:
			return Outcome{}, fmt.Errorf("%s: %w", job.RepoID, runErr)
		}
		return Outcome{}, fmt.Errorf("%s: %w: the run left no %s", job.RepoID, pipeline.ErrInfra, outdir.ResultFile)
	}
	o, err := outcomeOf(res)
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case o.Infra():
		return o, nil // Run retries it, then records infra_failed
	case code == pipeline.ExitInfra && o.ErrorClass != event.ClassContextOverflow:
		// Exit code 3 with a class this package does not know: still the
		// machinery, as for `runner exec`.
		return o, fmt.Errorf("%s: %w", job.RepoID, runErr)
	}
	if err := saveTree(job.WorkDir, job.OutDir, res.Files, res.SecretPaths); err != nil {
		return o, err
	}
	return o, nil
}

// JobModel is JobChecker: the model that overrides the task's ("" = the
// task's own).
func (e *PipelineExecutor) JobModel() string { return e.Model }

// CheckJobs is JobChecker: pipeline.Check of each job with the options
// Exec runs it with (the batch's cost budget left out: Check judges it at
// its own position), jobs with the same inputs and cassette checked once.
// A job whose --replay DIR cassette is missing is not checked here:
// CheckRepos names every missing one once the manifest is frozen.
func (e *PipelineExecutor) CheckJobs(ctx context.Context, task *spec.Spec, jobs []Job) []error {
	out := make([]error, len(jobs))
	seen := map[string]error{}
	for i, job := range jobs {
		replay := e.Replay
		if e.replayDir() {
			if replay = e.cassetteOf(job.RepoID); !exists(replay) {
				continue
			}
		}
		record := ""
		if e.Record != "" {
			record = filepath.Join(e.Record, job.RepoID+".jsonl") // not created: Check writes nothing
		}
		key := replay + "\x00" + inputsKey(job.Inputs)
		if err, ok := seen[key]; ok {
			out[i] = err
			continue
		}
		out[i] = pipeline.Check(ctx, task, pipeline.ExecOptions{
			Task: cmp.Or(job.SpecPath, job.LimitsFrom), Inputs: job.Inputs,
			Model: e.Model, BaseURL: e.BaseURL, APIKey: e.APIKey, Environ: e.Environ,
			Replay: replay, Record: record, MaxSteps: e.MaxSteps, Timeout: job.Timeout, LimitsFrom: job.LimitsFrom,
		})
		seen[key] = out[i]
	}
	return out
}

// inputsKey is a canonical text of inputs.
func inputsKey(inputs map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		fmt.Fprintf(&b, "%q=%q\n", k, inputs[k])
	}
	return b.String()
}

// exists reports whether path can be stat'ed.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// CheckRepos is RepoChecker: with a --replay dir, every repository to
// run needs its cassette, <repo-id>.jsonl, there. A missing one is a usage
// error (pipeline.ErrUsage, exit code 2) naming each missing file and how
// to record it, before anything is cloned.
func (e *PipelineExecutor) CheckRepos(repos []Repo) error {
	if !e.replayDir() {
		return nil
	}
	var missing []string
	for _, r := range repos {
		if _, err := os.Stat(e.cassetteOf(r.ID)); err != nil {
			missing = append(missing, r.ID+".jsonl")
		}
	}
	if len(missing) == 0 {
		return nil
	}
	const shown = 10
	list := strings.Join(missing[:min(len(missing), shown)], ", ")
	if len(missing) > shown {
		list += fmt.Sprintf(" and %d more", len(missing)-shown)
	}
	return fmt.Errorf("%w: --replay %s holds no cassette for %d of the %s to run (missing: %s); %s",
		pipeline.ErrUsage, e.Replay, len(missing), Repositories(len(repos)), list, e.recordHint())
}

// cassettes returns the cassette job replays and the one it records to
// ("" for none): Replay as is when it is a file, else its <repo-id>.jsonl;
// Record's <repo-id>.jsonl. A replay directory without the repository's
// cassette (one removed after CheckRepos) is a usage error that names the
// file and says how to record it: Exec refuses the job with it (exit 2).
func (e *PipelineExecutor) cassettes(job Job) (replay, record string, err error) {
	replay = e.Replay
	if e.replayDir() {
		replay = e.cassetteOf(job.RepoID)
		if _, err := os.Stat(replay); err != nil {
			return "", "", fmt.Errorf("%w: --replay %s holds no cassette for repository %s (missing: %s); %s",
				pipeline.ErrUsage, e.Replay, job.RepoID, filepath.Base(replay), e.recordHint())
		}
	}
	if e.Record != "" {
		if err := os.MkdirAll(e.Record, 0o755); err != nil {
			return "", "", fmt.Errorf("%w: --record: %w", pipeline.ErrUsage, err)
		}
		record = filepath.Join(e.Record, job.RepoID+".jsonl")
	}
	return replay, record, nil
}

// replayDir reports whether Replay is a directory of per-repository
// cassettes (not one cassette for all).
func (e *PipelineExecutor) replayDir() bool {
	fi, err := os.Stat(e.Replay)
	return e.Replay != "" && err == nil && fi.IsDir()
}

// cassetteOf is the repository's cassette in the Replay dir.
func (e *PipelineExecutor) cassetteOf(id string) string {
	return filepath.Join(e.Replay, id+".jsonl")
}

// recordHint says how to make the missing cassettes.
func (e *PipelineExecutor) recordHint() string {
	return fmt.Sprintf("record them with `runner batch run BATCH.yaml --out NEW-DIR --record %s` "+
		"(it talks to the model: needs OPENAI_API_KEY), or replay one cassette for every repository with --replay FILE", e.Replay)
}

// jobSpec stores the task spec the job runs with in out/<repo-id>/task.yaml
// (a copy of the batch's task file, or the inline task), so that publishing
// (taskSpecOf) finds it wherever the out dir is merged or copied to; it
// returns the spec file to run: the batch's task file as is (its relative
// references stay valid), else the stored copy.
func jobSpec(job Job) (string, error) {
	data, run := job.SpecInline, ""
	if data == nil {
		var err error
		if data, err = os.ReadFile(job.SpecPath); err != nil {
			return job.SpecPath, nil // the pipeline reports it (exit code 2: a task failure)
		}
		run = job.SpecPath
	}
	path := filepath.Join(job.OutDir, TaskFile)
	if err := os.MkdirAll(job.OutDir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", job.OutDir, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return cmp.Or(run, path), nil
}

// outcomeOf is the Outcome of a reported run. The patch path is made
// absolute (the pipeline names it relative to the working directory, as
// the out dir was given), and is "" when nothing changed.
func outcomeOf(res pipeline.Result) (Outcome, error) {
	o := Outcome{Status: res.Status, Steps: res.Steps, FilesChanged: len(res.Files), PatchPath: res.PatchPath, CostUSD: res.CostUSD}
	switch {
	case o.FilesChanged == 0:
		o.PatchPath = ""
	case !filepath.IsAbs(o.PatchPath):
		abs, err := filepath.Abs(o.PatchPath)
		if err != nil {
			return Outcome{}, fmt.Errorf("%w: patch path: %w", pipeline.ErrInfra, err)
		}
		o.PatchPath = abs
	}
	if res.Error != nil {
		o.Error, o.ErrorClass = res.Error.Message, res.Error.Class
	}
	return o, nil
}

// saveTree copies the files the final patch adds or changes from the work
// tree to out/tree/, keeping modes and symlinks, so that publishing can
// build the patched tree (github.PushOptions WorkTree and Paths). The
// files the run's secret gate found a secret in (secrets:
// pipeline.Result.SecretPaths) are left out: the out dir is uploaded and
// pushed from, and a saved copy would carry the secret the gate kept out
// of the patch (the work tree itself is removed after the attempt).
func saveTree(workDir, outDir string, files []event.FileChange, secrets []string) error {
	dst := filepath.Join(outDir, TreeDir)
	for _, f := range files {
		if f.Status == event.ChangeDeleted || slices.Contains(secrets, f.Path) || snapshot.NotRead(f.Omitted) {
			continue
		}
		if err := copyChanged(workDir, dst, f.Path); err != nil {
			return fmt.Errorf("%w: save %s: %w", pipeline.ErrInfra, f.Path, err)
		}
	}
	return nil
}

// copyChanged copies one work-tree-relative file (a regular file or a
// symlink; other kinds are left out) from src to dst.
func copyChanged(src, dst, rel string) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("path outside the work tree")
	}
	from, to := filepath.Join(src, filepath.FromSlash(rel)), filepath.Join(dst, filepath.FromSlash(rel))
	fi, err := os.Lstat(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Remove(to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // a rerun replaces what an earlier attempt saved
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return copytree.Symlink(from, to)
	case fi.Mode().IsRegular():
		return copytree.File(from, to)
	}
	return nil
}
