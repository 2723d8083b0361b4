package pipeline

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("checks: %w", ErrTaskFailed), 1},
		{fmt.Errorf("run: %w", context.DeadlineExceeded), 1},
		{ErrUsage, 2},
		{spec.Errors{{File: "a", Line: 1, Col: 1, Msg: "m"}}, 2},
		{errors.Join(spec.Errors{{File: "a", Line: 1, Col: 1, Msg: "m"}}, fmt.Errorf("x: %w", ErrUsage)), 2},
		{fmt.Errorf("inputs: %w", spec.ErrInputs), 2},
		{fmt.Errorf("load: %w", spec.ErrRead), 2},
		{fmt.Errorf("git: %w", ErrInfra), 3},
		{errors.New("something unexpected"), 3},
		{fmt.Errorf("step: %w", context.Canceled), 130},
		{fmt.Errorf("%w: %w", ErrCancelled, ErrInfra), 130},
		{&ExitError{Code: 4, Err: ErrUsage}, 4},
		{fmt.Errorf("wrapped: %w", &ExitError{Code: 1}), 1},
	}
	for _, tt := range tests {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
