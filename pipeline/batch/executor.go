package batch

import (
	"context"
	"time"

	"github.com/seed43ef5acb/runner/runner/event"
)

// Executor runs the task on one repository's work tree, without
// publishing. Run calls Exec from its worker goroutines, up to the batch's
// concurrency at once, each call with a different Job.
//
// Exec returns the run's outcome (the fields of its run.finished event).
// A returned Go error, or an Outcome whose ErrorClass is infrastructural
// (Outcome.Infra), means the machinery failed: Run retries the repository
// with backoff and records infra_failed when retries run out. An error
// with exit code 2 (pipeline.ExitCode: bad usage, an invalid spec or
// inputs), or an Outcome of class event.ClassUsage, is a refusal: Run
// records nothing for the repository, does not retry it, starts no
// further repository and ends with ErrRefused (exit 2). A task that
// ran and failed is an Outcome with a status, never an error, and is not
// retried. Exec must return promptly when ctx is cancelled.
type Executor interface {
	Exec(ctx context.Context, job Job) (Outcome, error)
}

// Preflighter is an optional capability of an Executor: a check that the
// executor can run at all (credentials, a cassette), so that a batch that
// cannot succeed stops with one clear error instead of failing every
// repository. Run calls Preflight once, from its own goroutine, after the
// batch spec is validated and before the manifest is written or anything is
// cloned. An error stops the batch (Run wraps it in ErrPreflight); it is not
// retried.
type Preflighter interface {
	Preflight(ctx context.Context) error
}

// RepoChecker is an optional capability of an Executor: a check of the
// repositories this invocation will run (the shard's, less those a
// resume leaves alone) against what the executor was given (for
// PipelineExecutor: a cassette per repository in a --replay dir). Run
// calls CheckRepos once, from its own goroutine, after the manifest is
// frozen and before anything is cloned. An error stops the batch (Run
// wraps it in ErrPreflight; wrap pipeline.ErrUsage for exit code 2); it
// is not retried.
type RepoChecker interface {
	CheckRepos(repos []Repo) error
}

// Job is one repository's execution.
type Job struct {
	RepoID  string // the manifest id, also the name of OutDir
	Repo    Repo   // the manifest entry
	WorkDir string // a fresh, isolated work tree (a git repository) to run in
	// SnapshotDir is the run's snapshot store, outside WorkDir and removed
	// with it ("" = the user's cache, one store per work tree path).
	SnapshotDir string
	// Hidden are the paths the run's sandbox hides beside its built-in
	// ones: the batch's clone cache entries and the other work trees.
	Hidden     []string
	SpecPath   string            // the task spec file; "" when SpecInline is set
	SpecInline []byte            // an inline task spec (YAML); nil when SpecPath is set
	Inputs     map[string]string // task inputs for this repository
	OutDir     string            // out/<repo-id>/: events.jsonl, changes.patch, result.json go here (emptied before each attempt)
	Timeout    time.Duration     // per-repository wall clock; 0 = none
	MaxCostUSD float64           // per-repository budget (already capped by what is left of the total); 0 = none
	LimitsFrom string            // the batch spec file Timeout and MaxCostUSD are set in, for messages
	Attempt    int               // 1-based; >1 after infrastructure failures
}

// Outcome is what Exec reports: the run.finished fields a batch records.
type Outcome struct {
	Status       event.Status // how the run ended (run.finished status)
	CostUSD      *float64     // total cost in USD; nil when unknown (a model without a price)
	Steps        int
	FilesChanged int
	PatchPath    string           // the patch file, absolute or relative to OutDir
	Error        string           // the run's error message, if any
	ErrorClass   event.ErrorClass // the run's error class, if any (see Infra)
}

// Infra reports whether the outcome is an infrastructure failure to retry:
// its error class is one of event.ClassInfra, ClassRetryable (a provider
// error that outlived the runner's own retries), ClassFatal or
// ClassInternal (the agent loop crashed). A run that ended
// with status "error" for another reason (event.ClassContextOverflow: the
// task outgrew the model's context window; event.ClassSpec) is a task
// failure.
func (o Outcome) Infra() bool {
	switch o.ErrorClass {
	case event.ClassInfra, event.ClassRetryable, event.ClassFatal, event.ClassInternal:
		return true
	}
	return false
}

// statusOf maps a finished run's outcome to a batch status. Cancelled runs,
// infrastructure failures and refusals (class event.ClassUsage, or an
// error with exit code 2: never a result) are decided by the caller, not
// here.
func statusOf(o Outcome) Status {
	switch o.Status {
	case event.StatusSuccess:
		if o.FilesChanged == 0 {
			return StatusNoChange
		}
		return StatusSuccess
	case event.StatusTimeout:
		return StatusTimeout
	case event.StatusBudgetExceeded:
		return StatusBudgetExceeded
	default: // failed, max_steps, blocked, error (task)
		return StatusTaskFailed
	}
}
