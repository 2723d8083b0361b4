package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// Stage is one step of the exec pipeline (goreleaser's pipe): a name for
// logs and errors, and Run. A stage that has nothing to do returns a
// *SkipError; any other error stops the main stages (the final ones still
// run).
type Stage interface {
	Name() string
	Run(ctx context.Context) error
}

// SkipError says a stage did not apply; it is not a failure.
type SkipError struct {
	Reason string
}

// Error returns the reason.
func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// skip returns a *SkipError with a formatted reason.
func skip(format string, args ...any) error {
	return &SkipError{Reason: fmt.Sprintf(format, args...)}
}

// IsSkip reports whether err says a stage was skipped.
func IsSkip(err error) bool {
	var s *SkipError
	return errors.As(err, &s)
}

// stageFunc adapts a function to a Stage.
type stageFunc struct {
	name string
	run  func(ctx context.Context) error
}

func (s stageFunc) Name() string                  { return s.name }
func (s stageFunc) Run(ctx context.Context) error { return s.run(ctx) }

// runStage is the policy wrapped around every stage: it logs the start and
// the outcome, turns a panic into an error wrapping ErrInfra, treats a
// *SkipError as success and names the stage in any error that is not
// already user-facing.
func runStage(ctx context.Context, log *slog.Logger, s Stage) (err error) {
	start := time.Now()
	log.Debug("stage started", "stage", s.Name())
	defer func() {
		if p := recover(); p != nil {
			log.Error("stage panicked", "stage", s.Name(), "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("%s: %w: panic: %v", s.Name(), ErrInfra, p)
		}
		switch {
		case err == nil:
			log.Debug("stage finished", "stage", s.Name(), "duration", time.Since(start))
		case IsSkip(err):
			log.Debug("stage skipped", "stage", s.Name(), "reason", err.Error())
			err = nil
		default:
			log.Debug("stage failed", "stage", s.Name(), "error", err)
		}
	}()
	if err := s.Run(ctx); err != nil {
		if IsSkip(err) || userFacing(err) {
			return err
		}
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	return nil
}

// userFacing reports errors that already say what is wrong and where
// (file:line:col for specs) and are printed as they are.
func userFacing(err error) bool {
	return errors.Is(err, ErrUsage) || errors.Is(err, ErrHistory) || errors.Is(err, spec.ErrInvalidSpec) || errors.Is(err, spec.ErrInputs) ||
		errors.Is(err, spec.ErrRead)
}

// runStages runs stages in order and stops at the first failure.
func runStages(ctx context.Context, log *slog.Logger, stages []Stage) error {
	for _, s := range stages {
		if err := runStage(ctx, log, s); err != nil {
			return err
		}
	}
	return nil
}
