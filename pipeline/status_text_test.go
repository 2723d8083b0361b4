package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

func TestCancelMessage(t *testing.T) {
	tests := []struct {
		cause error
		want  string
	}{
		{nil, "cancelled"},
		{context.Canceled, "cancelled"},
		{errors.New("interrupt signal received"), "cancelled (SIGINT)"},
		{errors.New("terminated signal received"), "cancelled (SIGTERM)"},
		{signalLike("terminated signal received"), "cancelled (SIGTERM)"},
		{errors.New("hangup signal received"), "cancelled (SIGHUP)"},
		{errors.New("batch stopped"), "cancelled: batch stopped"},
		{errors.New("cancelled by the batch"), "cancelled by the batch"},
	}
	for _, tt := range tests {
		if got := cancelMessage(tt.cause); got != tt.want {
			t.Errorf("cancelMessage(%v) = %q, want %q", tt.cause, got, tt.want)
		}
	}
}

func TestTimeoutMessage(t *testing.T) {
	task := &spec.Spec{}
	task.Limits.Timeout = 20 * time.Minute
	tests := []struct {
		opts ExecOptions
		spec *spec.Spec
		want string
	}{
		{ExecOptions{Timeout: time.Millisecond}, task, "the run's timeout (1ms, --timeout) was reached"},
		{ExecOptions{Task: "task.yaml"}, task, "the run's timeout (20m0s, limits.timeout in task.yaml) was reached"},
		// batch passes its own limits.timeout: no --timeout was given.
		{ExecOptions{Task: "task.yaml", Timeout: 6 * time.Second, LimitsFrom: "nightly.yaml"}, task,
			"the run's timeout (6s, limits.timeout in nightly.yaml) was reached"},
		{ExecOptions{}, &spec.Spec{}, "the run timed out"},
	}
	for _, tt := range tests {
		r := &execRun{opts: tt.opts, specState: specState{spec: tt.spec}}
		if got := r.timeoutMessage(); got != tt.want {
			t.Errorf("timeoutMessage() = %q, want %q", got, tt.want)
		}
	}
}

// TestStatusError: Exec's error says the status once.
func TestStatusError(t *testing.T) {
	tests := []struct {
		st   runStatus
		want string
	}{
		{runStatus{Status: "cancelled", Code: 130, Message: "cancelled (SIGTERM)"}, "cancelled (SIGTERM)"},
		{runStatus{Status: "timeout", Code: 1, Message: "the run's timeout (1ms, --timeout) was reached"},
			"the run's timeout (1ms, --timeout) was reached"},
		{runStatus{Status: "failed", Code: 1, Message: "check tests failed (attempt 2 of 2)"}, "check tests failed (attempt 2 of 2)"},
		{runStatus{Status: "max_steps", Code: 1, Message: "reached max_steps (3)"}, "reached max_steps (3)"},
		{runStatus{Status: "budget_exceeded", Code: 1, Message: "cost $2 reached max_cost_usd $2"},
			"run budget_exceeded: cost $2 reached max_cost_usd $2"},
		{runStatus{Status: "blocked", Code: 1}, "run blocked"},
	}
	for _, tt := range tests {
		err := statusError(tt.st)
		if err.Error() != tt.want || ExitCode(err) != tt.st.Code {
			t.Errorf("statusError(%+v) = %q (exit %d), want %q (exit %d)", tt.st, err, ExitCode(err), tt.want, tt.st.Code)
		}
	}
}

// signalLike is shaped like os/signal's cause: it also matches
// context.Canceled.
type signalLike string

func (s signalLike) Error() string        { return string(s) }
func (s signalLike) Is(target error) bool { return target == context.Canceled }

// TestErrCancelled: the cancel error matches the sentinel and the cause,
// maps to exit 130 and says "cancelled" once.
func TestErrCancelled(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(signalLike("interrupt signal received"))
	err := errCancelled(ctx)
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) || ExitCode(err) != ExitCancelled {
		t.Errorf("errCancelled = %v: does not match ErrCancelled and context.Canceled with exit 130", err)
	}
	if err.Error() != "cancelled (SIGINT)" {
		t.Errorf("text %q, want cancelled (SIGINT)", err)
	}
	plain, stop := context.WithCancel(t.Context())
	stop()
	if err := errCancelled(plain); err.Error() != "cancelled" || !errors.Is(err, ErrCancelled) {
		t.Errorf("plain cancel: %q", err)
	}
}
