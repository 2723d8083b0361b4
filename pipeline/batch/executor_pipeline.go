package batch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/report"
)

// Files the pipeline executor adds to out/<repo-id>/.
const (
	// TaskFile is the task spec the repository ran with: a copy of the
	// batch's task file, the inline task, or either with the
	// per-repository cost cap applied. Publishing reads it.
	TaskFile = "task.yaml"
	// TreeDir holds the files of the final patch as the run left them
	// (deleted files are absent), so that publishing can rebuild the
	// patched tree without applying the patch text.
	TreeDir = "tree"
)

// PipelineExecutor is the Executor of `runner batch run`: it runs each job
// with the exec pipeline (pipeline.Exec), as `runner exec TASK --repo
// WORKDIR --out OUTDIR --quiet` would, and builds the Outcome from the
// run's out/result.json (its run.finished record). It is safe for
// concurrent use: it holds only configuration.
type PipelineExecutor struct {
	Model   string   // overrides the task's model ("" = the spec's)
	BaseURL string   // OpenAI-compatible endpoint ("" = the default)
	APIKey  string   // the provider key (from OPENAI_API_KEY)
	Environ []string // the process environment, "KEY=VALUE"
	// Replay answers every repository's model calls from this cassette,
	// offline (each run replays it from the start).
	Replay   string
	MaxSteps int // overrides limits.max_steps; 0 = the spec's
	// Stderr receives the messages of runs that fail before they start;
	// nil discards them (results.jsonl records the error anyway).
	Stderr io.Writer
}

// Preflight fails when no repository could run: there is neither an API key
// nor a cassette to replay. The error wraps pipeline.ErrUsage (exit code 2)
// and says what to set, as `runner exec` does.
func (e *PipelineExecutor) Preflight(context.Context) error {
	if e.APIKey != "" || e.Replay != "" {
		return nil
	}
	return fmt.Errorf("%w: OPENAI_API_KEY is not set: set it to talk to %s "+
		"(any non-empty value for an endpoint that needs none), or replay a recorded session with --replay FILE",
		pipeline.ErrUsage, cmp.Or(e.BaseURL, pipeline.DefaultBaseURL))
}

// Exec runs job. Exit code 2 (an invalid spec or inputs) is a task failure
// (status "error", class event.ClassSpec); exit code 3 is an infrastructure
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
	runErr := pipeline.Exec(ctx, pipeline.ExecOptions{
		Task: task, Repo: job.WorkDir, Out: job.OutDir, Set: inputFlags(job.Inputs),
		Model: e.Model, BaseURL: e.BaseURL, APIKey: e.APIKey, Environ: e.Environ,
		Replay: e.Replay, MaxSteps: e.MaxSteps, Timeout: job.Timeout, Quiet: true,
		Stdout: io.Discard, Stderr: stderr,
	})
	o, found, err := readOutcome(job.OutDir)
	if err != nil {
		return Outcome{}, err
	}
	code := pipeline.ExitCode(runErr)
	switch {
	case found && o.Infra():
		return o, nil // Run retries it, then records infra_failed
	case found && code == pipeline.ExitInfra && o.ErrorClass != event.ClassContextOverflow:
		// Exit code 3 with a class this package does not know: still the
		// machinery, as for `runner exec`.
		return o, fmt.Errorf("%s: %w", job.RepoID, runErr)
	case found:
		if err := saveTree(ctx, job.WorkDir, job.OutDir); err != nil {
			return o, err
		}
		return o, nil
	case code == pipeline.ExitUsage:
		return Outcome{Status: event.StatusError, Error: runErr.Error(), ErrorClass: event.ClassSpec}, nil
	case runErr != nil:
		return Outcome{}, fmt.Errorf("%s: %w", job.RepoID, runErr)
	}
	return Outcome{}, fmt.Errorf("%s: %w: the run left no %s", job.RepoID, pipeline.ErrInfra, report.ResultFile)
}

// jobSpec stores the task spec the job runs with in out/<repo-id>/task.yaml
// (the batch's task file, an inline task, or either with the job's cost
// cap), so that publishing (taskSpecOf) finds it wherever the out dir is
// merged or copied to; it returns the spec file to run: the batch's task
// file as is (its relative references stay valid), else the stored copy.
func jobSpec(job Job) (string, error) {
	data, run := job.SpecInline, ""
	if data == nil {
		var err error
		if data, err = os.ReadFile(job.SpecPath); err != nil {
			return job.SpecPath, nil // the pipeline reports it (exit code 2: a task failure)
		}
		run = job.SpecPath
	}
	if job.MaxCostUSD > 0 {
		capped, changed, err := capCost(data, job.MaxCostUSD)
		if err != nil {
			return "", err
		}
		if changed {
			data, run = capped, ""
		}
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

// capCost lowers the spec's limits.max_cost_usd to limit (adding it when
// absent), keeping the rest of the document and its comments. It reports
// whether the spec changed. An unreadable spec is returned unchanged: the
// pipeline then reports its errors with positions.
//
// This stands in for a per-run cost override in pipeline.ExecOptions,
// which does not exist yet.
func capCost(data []byte, limit float64) ([]byte, bool, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return data, false, nil
	}
	limits := mappingValue(doc.Content[0], "limits")
	if limits == nil {
		limits = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		appendPair(doc.Content[0], "limits", limits)
	}
	if limits.Kind != yaml.MappingNode {
		return data, false, nil
	}
	value := strconv.FormatFloat(limit, 'f', -1, 64)
	cur := mappingValue(limits, "max_cost_usd")
	if cur != nil {
		if v, err := strconv.ParseFloat(cur.Value, 64); err == nil && v > 0 && v <= limit {
			return data, false, nil
		}
		cur.Kind, cur.Tag, cur.Value, cur.Style = yaml.ScalarNode, "!!float", value, 0
	} else {
		appendPair(limits, "max_cost_usd", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: value})
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, false, fmt.Errorf("%w: task spec: %w", spec.ErrInvalidSpec, err)
	}
	return out, true, nil
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func appendPair(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value)
}

// inputFlags turns inputs into sorted KEY=VALUE flags.
func inputFlags(inputs map[string]string) []string {
	set := make([]string, 0, len(inputs))
	for k, v := range inputs {
		set = append(set, k+"="+v)
	}
	slices.Sort(set)
	return set
}

// readOutcome reads out/result.json (the run.finished record); found is
// false when the run left none.
func readOutcome(outDir string) (Outcome, bool, error) {
	data, err := os.ReadFile(filepath.Join(outDir, report.ResultFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Outcome{}, false, nil
	}
	if err != nil {
		return Outcome{}, false, fmt.Errorf("%w: read result: %w", pipeline.ErrInfra, err)
	}
	var fin event.RunFinished
	if err := json.Unmarshal(data, &fin); err != nil {
		return Outcome{}, false, fmt.Errorf("%w: %s: %w", pipeline.ErrInfra, report.ResultFile, err)
	}
	o := Outcome{Status: fin.Status, Steps: fin.Steps, FilesChanged: fin.FilesChanged, PatchPath: fin.PatchPath}
	if fin.CostUSD != nil {
		o.CostUSD = *fin.CostUSD
	}
	switch {
	case fin.FilesChanged == 0:
		o.PatchPath = ""
	case !filepath.IsAbs(o.PatchPath):
		// The pipeline names it relative to the working directory (as
		// the out dir was given); Outcome wants it absolute or relative
		// to the out dir.
		abs, err := filepath.Abs(o.PatchPath)
		if err != nil {
			return Outcome{}, false, fmt.Errorf("%w: patch path: %w", pipeline.ErrInfra, err)
		}
		o.PatchPath = abs
	}
	if fin.Error != nil {
		o.Error, o.ErrorClass = fin.Error.Message, fin.Error.Class
	}
	return o, true, nil
}

// changedFiles returns the files of the run's final patch from
// out/events.jsonl; nil when the run changed nothing.
func changedFiles(ctx context.Context, outDir string) ([]event.FileChange, error) {
	reports, err := report.Load(ctx, filepath.Join(outDir, report.EventsFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pipeline.ErrInfra, err)
	}
	if len(reports) == 0 || reports[len(reports)-1].Diff == nil || !reports[len(reports)-1].Diff.Final {
		return nil, nil
	}
	return reports[len(reports)-1].Diff.Files, nil
}

// saveTree copies the files the final patch adds or changes from the work
// tree to out/tree/, keeping modes and symlinks, so that publishing can
// build the patched tree (github.PushOptions WorkTree and Paths).
func saveTree(ctx context.Context, workDir, outDir string) error {
	files, err := changedFiles(ctx, outDir)
	if err != nil || len(files) == 0 {
		return err
	}
	dst := filepath.Join(outDir, TreeDir)
	for _, f := range files {
		if f.Status == event.ChangeDeleted {
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
		return pipeline.CopySymlink(from, to)
	case fi.Mode().IsRegular():
		return pipeline.CopyFile(from, to)
	}
	return nil
}
