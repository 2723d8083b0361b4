package pipeline

import (
	"context"
	"fmt"

	"github.com/seed43ef5acb/runner/runner/event"
)

// runStatus is how the run ended.
type runStatus struct {
	Status  event.Status
	Code    int
	Class   event.ErrorClass
	Message string
}

// decideStatus turns the outcome of the main stages into the run's status:
// a signal wins, then a failed stage, then the agent's own status, then the
// checks.
func (r *execRun) decideStatus(ctx context.Context, mainErr error) runStatus {
	switch {
	case ctx.Err() != nil:
		return runStatus{event.StatusCancelled, ExitCancelled, event.ClassCancelled,
			cancelMessage(context.Cause(ctx))}
	case r.logGuard.failed() != nil:
		// The run was stopped: going on unrecorded would lose its record.
		return runStatus{event.StatusError, ExitInfra, event.ClassInfra, fmt.Sprintf(
			"the event log could not be written, so the run was stopped: %v; make room where the log goes (--out, --events) and run again",
			r.logGuard.failed())}
	case r.baseReady() && r.baseErr != nil:
		// A failed base snapshot stops the session through its context
		// (afterBaseTool): the run failed, it was not cancelled.
		return runStatus{event.StatusError, ExitInfra, event.ClassInfra, r.waitBase().Error()}
	case len(r.violations) > 0:
		return runStatus{event.StatusViolation, ExitTaskFailed, event.ClassViolation, r.violations[0].Message}
	case mainErr != nil:
		code := ExitCode(mainErr)
		if code == ExitCancelled {
			return runStatus{event.StatusCancelled, code, event.ClassCancelled, mainErr.Error()}
		}
		if code == ExitUsage {
			return runStatus{event.StatusError, code, event.ClassUsage, mainErr.Error()}
		}
		return runStatus{event.StatusError, ExitInfra, event.ClassInfra, mainErr.Error()}
	case r.ranAgent && r.result.Status != event.StatusSuccess:
		st := runStatus{Status: r.result.Status, Code: statusCode(r.result.Status)}
		if e := r.result.RunError(); e != nil {
			st.Class, st.Message = e.Class, e.Message
		}
		if st.Status == event.StatusTimeout {
			st.Message = r.timeoutMessage()
		}
		if cassetteMisfit(r.result.Err) {
			st.Code, st.Class = ExitUsage, event.ClassUsage // the --replay cassette does not fit this run
			if ref := r.denials.refusal(); ref != "" {
				st.Message += fmt.Sprintf("; but first the sandbox seems to have refused a command (%s), "+
					"so the run left the recorded path there: open what it needs (sandbox.writable, sandbox.network) and replay again", ref)
			}
		}
		return st
	case r.checksErr != nil:
		return runStatus{event.StatusFailed, ExitTaskFailed, event.ClassChecks, r.checksErr.Error()}
	case len(omittedFiles(r.files)) > 0:
		return runStatus{event.StatusFailed, ExitTaskFailed, event.ClassPatchIncomplete, omittedMessage(r.files, r.binaryPatchLimit())}
	case r.ranAgent && r.result.DeniedLast != "" && len(r.spec.Checks) == 0:
		// Nothing verifies the answer, and the agent's last attempt was refused.
		return runStatus{event.StatusFailed, ExitTaskFailed, event.ClassBlocked, fmt.Sprintf(
			"the agent finished right after a call that could not run (%s: denied or an unknown tool) and no call succeeded after it, so its answer is unverified: "+
				"allow what the task needs in permissions, or add a check that verifies the task", r.result.DeniedLast)}
	}
	return runStatus{Status: event.StatusSuccess, Code: ExitOK}
}

// statusCode maps a run status to the exit code.
func statusCode(status event.Status) int {
	switch status {
	case event.StatusSuccess:
		return ExitOK
	case event.StatusCancelled:
		return ExitCancelled
	case event.StatusError:
		return ExitInfra
	default: // failed, max_steps, budget_exceeded, timeout, blocked
		return ExitTaskFailed
	}
}
