package runner

import (
	"context"
	"fmt"
	"math"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// finishStep commits a finished turn, accounts for it, emits step.finished
// and the step's patch, then decides what comes next.
func (s *Session) finishStep(ctx context.Context, t *turn) stepResult {
	s.appendMessage(t.msg)
	var usage llm.Usage
	var cost *float64
	if t.usage != nil {
		usage = *t.usage
		s.lastUsage = &usage
		cost = s.account(usage)
	} else if s.cfg.Pricer != nil {
		s.costUnknown = true // no usage: the step's tokens, and so its cost, are unknown (not 0)
	}
	s.usage = s.usage.Add(usage)
	// The final message is the text of a final answer: a turn that made no
	// tool call (or gave the structured output). Narration beside a tool
	// call is not one, so a run that stops mid-work (cancel, max_steps, a
	// replay that ran out) has none rather than a sentence that reads like
	// an answer.
	if text := t.msg.text(PartText); t.structured != nil || !t.hasTools() {
		if text != "" || t.structured == nil {
			s.final = text
		}
	} else {
		s.final = ""
	}
	t.msg.Parts = append(t.msg.Parts, &Part{Kind: PartStepFinish, Step: s.step,
		Fin: &StepFinish{Reason: t.finish, Usage: usage, CostUSD: cost}})
	s.stepClosed = s.step
	stepCost := cost // the step's: this attempt's and its failed attempts'
	if stepCost != nil && s.failedUsage != (llm.Usage{}) {
		c := roundUSD(*stepCost + s.failedCost)
		stepCost = &c
	}
	if s.failedUnknown || s.failedUnpriced {
		stepCost = nil
	}
	s.emit(event.StepFinished{
		Step:          s.step,
		FinishReason:  string(t.finish),
		Tokens:        tokensOf(usage.Add(s.failedUsage)),
		TokensUnknown: t.usage == nil || s.failedUnknown,
		Model:         t.model,
		CostUSD:       stepCost,
		DurationMS:    s.sinceMS(s.stepStart),
	})
	s.emitPatch(ctx, t)
	return s.decide(t)
}

// account adds a call's cost to the session and returns it (nil: unknown).
// Costs are rounded to a nano-dollar (see roundUSD), the call's and the
// running total alike.
func (s *Session) account(u llm.Usage) *float64 {
	if s.cfg.Pricer == nil {
		return nil
	}
	c := s.cfg.Pricer.Cost(s.cfg.ModelName, u)
	if c == nil {
		s.costUnknown = true
		return nil
	}
	call := roundUSD(*c)
	s.cost = roundUSD(s.cost + call)
	return &call
}

// roundUSD rounds a cost in US dollars to 1e-9 (a nano-dollar, far below
// any price's precision), so that products and sums of float prices are
// emitted as 0.0003536, not 0.00035360000000000003.
func roundUSD(usd float64) float64 {
	return math.Round(usd*1e9) / 1e9
}

// decide turns a committed turn into the loop's signal: a valid structured
// output ends the run, then a turn without tool calls is judged by its
// finish reason, then the stop rules run in order.
func (s *Session) decide(t *turn) stepResult {
	if t.structured != nil {
		return stop(outcome{status: event.StatusSuccess, structured: t.structured})
	}
	if t.hasTools() {
		s.lengthTries, s.pauses = 0, 0
	} else if r, done := s.judgeFinish(t); done {
		return r
	}
	for _, rule := range stopRules() {
		if out, done := rule(s); done {
			return stop(out)
		}
	}
	return stepResult{sig: sigContinue}
}

// maxPauses bounds pause_turn replies in a row: each is resent as is, and a
// provider that never finishes must not spend the step budget alone.
const maxPauses = 5

// judgeFinish handles a turn that made no tool call. stop finishes the
// run, unless structured output is still owed; length is continued once,
// then fails; an unknown reason (one the llm package's table does not
// know: the reply is not known to be complete) is likewise continued once,
// then fails, never taken as done; paused is resent as is (maxPauses);
// content-filter and error fail.
func (s *Session) judgeFinish(t *turn) (stepResult, bool) {
	switch t.finish {
	case llm.FinishLength:
		s.lengthTries++
		if s.lengthTries > 1 {
			return stop(failure(event.StatusFailed, event.ClassLength,
				"the model's reply hit the output token limit twice in a row", nil)), true
		}
		s.appendMessage(userMessage(lengthNote))
		return stepResult{}, false
	case llm.FinishUnknown:
		s.lengthTries++
		if s.lengthTries > 1 {
			return stop(failure(event.StatusFailed, event.ClassModel,
				"the model's reply ended twice in a row without a finish reason that says it is complete", nil)), true
		}
		s.appendMessage(userMessage(unknownFinishNote))
		return stepResult{}, false
	case llm.FinishPaused:
		// Anthropic's pause_turn: the turn, already in the history, goes
		// back as the last message so the model resumes it.
		s.pauses++
		if s.pauses > maxPauses {
			return stop(failure(event.StatusFailed, event.ClassModel,
				fmt.Sprintf("the provider paused the model's turn %d times in a row", s.pauses), nil)), true
		}
		return stepResult{}, false
	case llm.FinishContentFilter:
		return stop(failure(event.StatusFailed, event.ClassContentFilter,
			"the provider's content filter stopped the reply", nil)), true
	case llm.FinishError:
		return stop(failure(event.StatusFailed, event.ClassModel, "the model ended its reply with an error", nil)), true
	}
	s.lengthTries, s.pauses = 0, 0
	if s.schema == nil {
		return stop(outcome{status: event.StatusSuccess}), true
	}
	s.outputTries++
	if s.outputTries < maxStructuredTries && !s.isLastStep() {
		s.appendMessage(userMessage(structuredNudge))
	}
	return stepResult{}, false
}

// stopRule is one reason to stop a run that would otherwise go on; each is
// a small predicate tested alone.
type stopRule func(s *Session) (outcome, bool)

// stopRules run in order after every step that did not finish the run.
func stopRules() []stopRule {
	return []stopRule{stopOnDenials, stopOnOutputTries, stopOnCost, stopOnTokens, stopOnLastStep}
}

// stopOnDenials: too many permission denials mean the task cannot be done
// within its permissions.
func stopOnDenials(s *Session) (outcome, bool) {
	if s.denials < s.cfg.Limits.MaxDenials {
		return outcome{}, false
	}
	return failure(event.StatusBlocked, event.ClassBlocked,
		fmt.Sprintf("%d permission denials (max_denials %d)", s.denials, s.cfg.Limits.MaxDenials), nil), true
}

// stopOnOutputTries: the model failed to give valid structured output in
// the allowed tries.
func stopOnOutputTries(s *Session) (outcome, bool) {
	if s.schema == nil || s.outputTries < maxStructuredTries {
		return outcome{}, false
	}
	return failure(event.StatusFailed, event.ClassOutput,
		fmt.Sprintf("no valid structured output after %d tries", s.outputTries), nil), true
}

// stopOnCost: the known cost reached max_cost_usd.
func stopOnCost(s *Session) (outcome, bool) {
	limit := s.cfg.Limits.MaxCostUSD
	if limit <= 0 || s.cost < limit {
		return outcome{}, false
	}
	return failure(event.StatusBudgetExceeded, event.ClassBudget,
		fmt.Sprintf("cost %s reached max_cost_usd %s", event.FormatCost(s.cost), event.FormatCost(limit)), nil), true
}

// stopOnTokens: input plus output tokens reached max_tokens.
func stopOnTokens(s *Session) (outcome, bool) {
	limit := s.cfg.Limits.MaxTokens
	used := s.usage.InputTokens + s.usage.OutputTokens
	if limit <= 0 || used < limit {
		return outcome{}, false
	}
	return failure(event.StatusBudgetExceeded, event.ClassBudget,
		fmt.Sprintf("%d tokens reached max_tokens %d", used, limit), nil), true
}

// stopOnLastStep: the last allowed step ended without finishing.
func stopOnLastStep(s *Session) (outcome, bool) {
	if !s.isLastStep() {
		return outcome{}, false
	}
	return failure(event.StatusMaxSteps, event.ClassMaxSteps,
		fmt.Sprintf("reached max_steps (%d) before the model finished", s.cfg.Limits.MaxSteps), nil), true
}
