package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// signal is what the loop does after a step, as in OpenCode's processor.
type signal int

const (
	sigContinue signal = iota // tool results go back to the model
	sigStop                   // finished, blocked or failed
	sigCompact                // the context overflowed: summarise and go on
)

// stepResult is a step's signal and, for sigStop, the run's outcome.
type stepResult struct {
	sig signal
	out outcome
}

func stop(o outcome) stepResult { return stepResult{sig: sigStop, out: o} }

// runLoop drives the session step by step until a step says stop.
func (s *Session) runLoop(ctx context.Context) outcome {
	for {
		if out, done := s.beforeStep(ctx); done {
			return out
		}
		if s.overWindow() {
			if out, ok := s.compact(ctx, "usage"); !ok {
				return out
			}
		}
		s.openStep()
		r := s.runStep(ctx)
		switch r.sig {
		case sigStop:
			return r.out
		case sigCompact:
			if out, ok := s.compact(ctx, "overflow"); !ok {
				return out
			}
		}
	}
}

// beforeStep ends the run when the context is done or, before a new step,
// when the step cap is already reached (a Continue after max_steps).
func (s *Session) beforeStep(ctx context.Context) (outcome, bool) {
	if ctx.Err() != nil {
		return s.ctxOutcome(ctx), true
	}
	if !s.stepOpen() && s.cfg.Limits.MaxSteps > 0 && s.step >= s.cfg.Limits.MaxSteps {
		return failure(event.StatusMaxSteps, event.ClassMaxSteps,
			fmt.Sprintf("reached max_steps (%d)", s.cfg.Limits.MaxSteps), nil), true
	}
	return outcome{}, false
}

// stepOpen reports whether step.started went out for a step not finished
// yet (a step interrupted by compaction is re-run under the same number).
func (s *Session) stepOpen() bool { return s.stepEmitted > s.stepClosed }

// openStep starts a new step unless one is open.
func (s *Session) openStep() {
	if s.stepOpen() {
		return
	}
	s.step++
	s.stepEmitted = s.step
	s.failedUsage, s.failedCost, s.failedUnknown, s.failedUnpriced = llm.Usage{}, 0, false, false
	s.stepStart = s.cfg.Now()
	s.emit(event.StepStarted{Step: s.step})
}

// isLastStep reports whether the open step is the last one allowed.
func (s *Session) isLastStep() bool {
	return s.cfg.Limits.MaxSteps > 0 && s.step >= s.cfg.Limits.MaxSteps
}

// runStep calls the model (retrying retryable failures) and commits the
// turn.
func (s *Session) runStep(ctx context.Context) stepResult {
	last := s.isLastStep()
	if last && !s.lastNoted {
		s.lastNoted = true
		note := lastStepNote
		if s.schema != nil {
			note = lastStepStructuredNote
		}
		s.appendMessage(userMessage(note))
	}
	req := s.request(last)
	for {
		t := s.process(ctx, req, last)
		if t.err == nil {
			s.failures = 0
			s.backoff.Reset()
			return s.finishStep(ctx, t)
		}
		if r, done := s.handleFailure(ctx, t); done {
			return r
		}
	}
}

// request builds the step's request: the system prompt, the append-only
// history, the sorted tools. On the last step tools stay defined (so the
// prompt prefix stays cached) but the tool choice is none, unless the run
// needs structured output.
func (s *Session) request(last bool) llm.Request {
	msgs := make([]llm.Message, 0, len(s.wire)+1)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: s.system})
	msgs = append(msgs, s.wire...)
	req := llm.Request{
		Model:           s.cfg.ModelName,
		Messages:        msgs,
		Temperature:     s.cfg.Temperature,
		TopP:            s.cfg.TopP,
		MaxOutputTokens: s.cfg.MaxOutputTokens,
		ReasoningEffort: s.cfg.ReasoningEffort,
	}
	if len(s.defs) == 0 {
		return req
	}
	req.Tools = s.defs
	switch {
	case s.schema != nil:
		req.ToolChoice = llm.ToolChoiceRequired
	case last:
		req.ToolChoice = llm.ToolChoiceNone
	default:
		req.ToolChoice = llm.ToolChoiceAuto
	}
	return req
}

// handleFailure acts on a failed attempt: done=false means "retry the same
// request now".
func (s *Session) handleFailure(ctx context.Context, t *turn) (stepResult, bool) {
	s.accountFailed(t)
	if ctx.Err() != nil {
		s.closeFailedStep(ctx, t)
		return stop(s.ctxOutcome(ctx)), true
	}
	le := classify(t.err)
	switch le.Class {
	case llm.ClassContextOverflow:
		if t.ran > 0 { // tools changed the work tree: keep what they did
			s.closeFailedStep(ctx, t)
		}
		return stepResult{sig: sigCompact}, true
	case llm.ClassRetryable:
		kept := t.ran > 0
		if kept { // tools changed the work tree: keep them, go on with a new step
			s.closeFailedStep(ctx, t)
		}
		if err := s.waitRetry(ctx, le); err != nil {
			s.closeFailedStep(ctx, t)
			return stop(s.retryOutcome(ctx, le, err)), true
		}
		if kept {
			return stepResult{sig: sigContinue}, true
		}
		return stepResult{}, false
	default:
		s.closeFailedStep(ctx, t)
		return stop(failure(event.StatusError, event.ErrorClass(le.Class), le.Error(), le)), true
	}
}

// retryOutcome is the outcome when waiting for a retry failed: the context
// ended, or the attempts ran out.
func (s *Session) retryOutcome(ctx context.Context, le *llm.Error, err error) outcome {
	if ctx.Err() != nil {
		return s.ctxOutcome(ctx)
	}
	return failure(event.StatusError, event.ErrorClass(le.Class), err.Error(), le)
}

// closeFailedStep keeps, of a failed attempt, only the tool calls that ran
// (their effects are in the work tree; the model must see their results),
// and closes the step with finish reason error.
func (s *Session) closeFailedStep(ctx context.Context, t *turn) {
	if !s.stepOpen() {
		return
	}
	m := t.ranOnly()
	if m != nil {
		s.appendMessage(m)
	}
	s.closeOpenStep()
	if m != nil {
		s.emitPatch(ctx, t)
	}
}

// closeOpenStep emits step.finished (reason error) for a step left open,
// so every step.started has its step.finished whatever ended the run. It
// carries what the step's failed attempts used (accountFailed).
func (s *Session) closeOpenStep() {
	if !s.stepOpen() {
		return
	}
	s.stepClosed = s.step
	ev := event.StepFinished{Step: s.step, FinishReason: string(llm.FinishError), DurationMS: s.sinceMS(s.stepStart),
		Tokens: tokensOf(s.failedUsage), TokensUnknown: s.failedUnknown}
	if s.cfg.Pricer != nil && !s.failedUnknown && !s.failedUnpriced && s.failedUsage != (llm.Usage{}) {
		c := roundUSD(s.failedCost)
		ev.CostUSD = &c
	}
	s.emit(ev)
}

// accountFailed counts what a failed attempt used. The provider bills a
// call that produced output even when the run stopped reading before the
// usage came (a cancel or timeout while a tool call ran, a stream cut):
// then the step's tokens and the run's cost are unknown, never 0. An
// attempt that got nothing (an HTTP error before the stream) used nothing.
func (s *Session) accountFailed(t *turn) {
	switch {
	case t.usage != nil:
		s.usage = s.usage.Add(*t.usage)
		s.failedUsage = s.failedUsage.Add(*t.usage)
		if c := s.account(*t.usage); c != nil {
			s.failedCost += *c
		} else {
			s.failedUnpriced = true
		}
	case t.produced():
		s.failedUnknown = true
		if s.cfg.Pricer != nil {
			s.costUnknown = true
		}
	}
}

// ctxOutcome is the outcome of a done context: timeout for the session's
// own deadline (named with its value) or any other deadline, cancelled
// otherwise.
func (s *Session) ctxOutcome(ctx context.Context) outcome {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrTimeout) && s.cfg.Limits.Timeout > 0 {
		return failure(event.StatusTimeout, event.ClassTimeout,
			fmt.Sprintf("the run's timeout (%s) was reached", s.cfg.Limits.Timeout), cause)
	}
	if errors.Is(cause, ErrTimeout) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure(event.StatusTimeout, event.ClassTimeout, "the run timed out", cause)
	}
	return failure(event.StatusCancelled, event.ClassCancelled, "the run was cancelled", cause)
}

// failure is an outcome with an error.
func failure(status event.Status, class event.ErrorClass, msg string, cause error) outcome {
	return outcome{status: status, err: &Error{Class: class, Message: msg, Err: cause}}
}

// classify returns the provider error of a failed attempt; unclassified
// errors are fatal, and a stream cut before finish-step is retryable.
func classify(err error) *llm.Error {
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	if errors.Is(err, ErrStreamEnded) {
		return &llm.Error{Class: llm.ClassRetryable, Message: err.Error(), Err: err}
	}
	return &llm.Error{Class: llm.ClassFatal, Message: err.Error(), Err: err}
}
