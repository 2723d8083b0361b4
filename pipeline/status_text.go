package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/seed43ef5acb/runner/runner/event"
)

// signalNames are the signals cmd cancels a run on, by their usual names.
func signalNames() []struct {
	sig  os.Signal
	name string
} {
	return []struct {
		sig  os.Signal
		name string
	}{{os.Interrupt, "SIGINT"}, {syscall.SIGTERM, "SIGTERM"}, {syscall.SIGHUP, "SIGHUP"}}
}

// cancelMessage says why the run was cancelled in one phrase: "cancelled
// (SIGTERM)" for a signal.NotifyContext cause (whose text is "<signal>
// signal received"), "cancelled" for a bare cancel, "cancelled: <cause>"
// for any other cause.
//
// The signal is matched first: the signal cause also matches
// context.Canceled.
func cancelMessage(cause error) string {
	if cause == nil {
		return "cancelled"
	}
	for _, s := range signalNames() {
		if cause.Error() == s.sig.String()+" signal received" {
			return "cancelled (" + s.name + ")"
		}
	}
	if errors.Is(cause, context.Canceled) {
		return "cancelled"
	}
	return event.SayOnce("cancelled", cause.Error())
}

// cancelError is the error of work stopped by a cancel: it matches
// ErrCancelled and the context's cause, and its text says it once
// ("cancelled (SIGTERM)", not "cancelled: interrupt signal received").
type cancelError struct{ cause error }

// errCancelled is the cancelError of a done ctx.
func errCancelled(ctx context.Context) error {
	return &cancelError{cause: context.Cause(ctx)}
}

func (e *cancelError) Error() string { return cancelMessage(e.cause) }

func (e *cancelError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrCancelled}
	}
	return []error{ErrCancelled, e.cause}
}

// timeoutMessage names the wall-clock limit that ended the run, its value
// and where it was set.
func (r *execRun) timeoutMessage() string {
	limit := r.limits().Timeout
	if limit <= 0 {
		return "the run timed out"
	}
	from := "limits.timeout"
	switch {
	case r.opts.Timeout > 0 && r.opts.LimitsFrom != "":
		from += " in " + r.opts.LimitsFrom
	case r.opts.Timeout > 0:
		from = "--timeout"
	case r.opts.Task != "":
		from += " in " + r.opts.Task
	}
	return fmt.Sprintf("the run's timeout (%s, %s) was reached", limit, from)
}

// statusError is the error Exec returns for a run that did not succeed:
// "run <status>: <message>", or the message alone when it names the
// status already ("cancelled (SIGTERM)", "the run's timeout … was reached").
func statusError(st runStatus) *ExitError {
	msg, lower, status := st.Message, strings.ToLower(st.Message), string(st.Status)
	if !strings.Contains(lower, status) && !strings.Contains(lower, strings.ReplaceAll(status, "_", " ")) {
		msg = event.SayOnce("run "+status, msg)
	}
	return &ExitError{Code: st.Code, Err: errors.New(msg)}
}
