package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/historyfile"
)

// Exit codes of the runner CLI, documented in docs/outputs.md.
const (
	ExitOK         = 0   // success
	ExitTaskFailed = 1   // checks failed, the model gave up, a budget or step limit was reached
	ExitUsage      = 2   // bad usage or an invalid spec
	ExitInfra      = 3   // provider or infrastructure error (after retries)
	ExitCancelled  = 130 // cancelled by a signal
)

// Sentinel errors. Wrap them with %w; ExitCode maps them to exit codes.
var (
	// ErrTaskFailed: the run ended but the task did not succeed (exit 1).
	ErrTaskFailed = errors.New("task failed")
	// ErrUsage: the command line is wrong (exit 2).
	ErrUsage = errors.New("usage error")
	// ErrInfra: the machinery failed: file system, git, network (exit 3).
	ErrInfra = errors.New("infrastructure error")
	// ErrCancelled: the run was cancelled by a signal (exit 130).
	ErrCancelled = errors.New("cancelled")
	// ErrHistory: an earlier run's history cannot be continued (exit 2).
	ErrHistory = historyfile.ErrHistory
)

// ExitError carries an explicit exit code; it wins over every sentinel.
type ExitError struct {
	Code int
	Err  error
	// Reported says the error was already shown (as the console's ::error
	// annotation under GitHub Actions): the CLI prints it no second time.
	Reported bool
}

// Error returns the wrapped error's text.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode maps an error to the CLI's exit code: nil → 0; an *ExitError →
// its Code; cancellation (ErrCancelled, context.Canceled) → 130; provider
// infrastructure errors → 3; usage, spec and input errors (spec.ErrInvalidSpec, spec.ErrInputs, spec.ErrRead) → 2; a failed
// task (ErrTaskFailed, or a wall-clock limit: context.DeadlineExceeded) → 1.
// Anything else is an unexpected failure of the machinery → 3.
func ExitCode(err error) int {
	var exit *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exit):
		return exit.Code
	case errors.Is(err, ErrCancelled), errors.Is(err, context.Canceled):
		return ExitCancelled
	case errors.Is(err, ErrInfra):
		return ExitInfra
	case errors.Is(err, ErrUsage), errors.Is(err, ErrHistory), errors.Is(err, spec.ErrInvalidSpec), errors.Is(err, spec.ErrInputs),
		errors.Is(err, spec.ErrRead):
		return ExitUsage
	case errors.Is(err, ErrTaskFailed), errors.Is(err, context.DeadlineExceeded):
		return ExitTaskFailed
	default:
		return ExitInfra
	}
}
