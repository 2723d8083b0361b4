package batch

import (
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrInvalidSpec marks a batch spec that failed validation; the error
	// is a SpecErrors listing every problem as file:line:col. It is the
	// task spec loader's sentinel (spec.ErrInvalidSpec), so the CLI maps
	// both kinds of invalid spec to the same exit code.
	ErrInvalidSpec = spec.ErrInvalidSpec
	// ErrManifestMismatch means out/manifest.json exists but lists other
	// repositories than the batch spec now does (or merged shard dirs
	// disagree). It matches pipeline.ErrUsage (exit code 2): the remedy is
	// another --out (or other dirs to merge).
	ErrManifestMismatch error = &usageError{msg: "manifest does not match the batch spec"}
	// ErrMergeIntoInput means batch merge was asked to write into one of
	// the dirs it merges. It matches pipeline.ErrUsage (exit code 2).
	ErrMergeIntoInput error = &usageError{msg: "the merge out dir is one of the dirs to merge"}
	// ErrBadShard is an invalid --shard I/N or index/count pair.
	ErrBadShard = errors.New("invalid shard")
	// ErrBadStatus is an unknown status name (for --fail-on).
	ErrBadStatus = errors.New("unknown status")
	// ErrIncomplete means merged results miss repositories of the manifest
	// (a shard did not report).
	ErrIncomplete = errors.New("merged results are incomplete")
	// ErrPublish means at least one pull request could not be opened.
	ErrPublish = errors.New("publishing failed")
	// ErrHourlyCap means publishing stopped at the per-hour PR cap
	// (PublishOptions.StopAtHourlyCap); re-run later to go on.
	ErrHourlyCap = errors.New("hourly pull request cap reached")
	// ErrBatchFailed is Summary.Err: some repository ended in a --fail-on
	// status. It wraps pipeline.ErrTaskFailed (exit code 1).
	ErrBatchFailed = fmt.Errorf("batch failed: %w", pipeline.ErrTaskFailed)
	// ErrNoExecutor means RunOptions.Executor was nil.
	ErrNoExecutor = errors.New("no executor configured")
	// ErrPreflight means the executor's Preflight check failed: the batch
	// could not run any repository and stopped before cloning. The error
	// also wraps the executor's cause (for PipelineExecutor,
	// pipeline.ErrUsage: exit code 2).
	ErrPreflight = errors.New("batch cannot start")
	// ErrRefused means the executor refused a repository's run with exit
	// code 2 (bad usage, an invalid spec or inputs) that Check did not
	// foresee: nothing was recorded for it, no further repository was
	// started, and the batch stopped once those under way had finished.
	// The error also wraps the refusals (exit code 2).
	ErrRefused = errors.New("batch stopped")
	// ErrNoPublisher means PublishOptions.Publisher was nil.
	ErrNoPublisher = errors.New("no publisher configured")
)

// usageError is a sentinel with its own message that also matches
// pipeline.ErrUsage, so the CLI exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func (e *usageError) Unwrap() error { return pipeline.ErrUsage }
