package batch

import (
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/pipeline"
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrInvalidSpec marks a batch spec that failed validation; the error
	// is a SpecErrors listing every problem as file:line:col. It is the
	// task spec loader's sentinel (pipeline.ErrInvalidSpec), so the CLI maps
	// both kinds of invalid spec to the same exit code.
	ErrInvalidSpec = pipeline.ErrInvalidSpec
	// ErrManifestMismatch means out/manifest.json exists but lists other
	// repositories than the batch spec now does.
	ErrManifestMismatch = errors.New("manifest does not match the batch spec")
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
	// ErrNoPublisher means PublishOptions.Publisher was nil.
	ErrNoPublisher = errors.New("no publisher configured")
)
