package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// omittedOutput replaces tool outputs when even the summary request
// overflows.
const omittedOutput = "[output omitted to fit the context window]"

// overWindow reports whether the last call's tokens leave less than the
// reserve below the model's context window.
func (s *Session) overWindow() bool {
	if s.lastUsage == nil || s.cfg.Windows == nil {
		return false
	}
	window := s.cfg.Windows.ContextWindow(s.cfg.ModelName)
	if window <= 0 {
		return false
	}
	used := s.lastUsage.InputTokens + s.lastUsage.OutputTokens
	return used > int64(window-s.reserve(window))
}

// reserve is the number of tokens kept free below the window.
func (s *Session) reserve(window int) int {
	if s.cfg.CompactionReserve > 0 {
		return s.cfg.CompactionReserve
	}
	return min(window/5, maxReserve)
}

// compact summarises the conversation with the model and replaces the
// history with the task and the summary; ok=false ends the run.
func (s *Session) compact(ctx context.Context, reason string) (outcome, bool) {
	if s.compactions >= s.cfg.MaxCompactions {
		return failure(event.StatusError, event.ClassContextOverflow,
			fmt.Sprintf("context window still full after %d compactions", s.compactions), nil), false
	}
	var before int64
	if s.lastUsage != nil {
		before = s.lastUsage.InputTokens + s.lastUsage.OutputTokens
	}
	summary, err := s.summarise(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return s.ctxOutcome(ctx), false
		}
		le := classify(err)
		return failure(event.StatusError, event.ErrorClass(le.Class), "compaction failed: "+le.Error(), le), false
	}
	s.compactions++
	s.msgs, s.wire = nil, nil
	s.recordHistory(HistoryRecord{Kind: HistoryReset, Step: s.step, Reason: reason})
	s.appendMessage(userMessage(s.cfg.Prompt + compactedTaskHeader + summary + compactedTaskFooter))
	s.lastUsage = nil
	s.recent = nil
	s.lastNoted = false // the last-step note, if due, goes into the new history
	step := s.step
	if !s.stepOpen() {
		step++
	}
	s.emit(event.Compaction{Step: step, Reason: reason, TokensBefore: before})
	return outcome{}, true
}

// summarise asks the model for a summary of the conversation, retrying
// retryable errors; if the summary request itself overflows, tool outputs
// are left out once.
func (s *Session) summarise(ctx context.Context) (string, error) {
	req := s.request(false)
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: compactionPrompt})
	if len(req.Tools) > 0 {
		req.ToolChoice = llm.ToolChoiceNone // keep the tools: the prefix stays cached
	}
	trimmed := false
	for {
		text, err := s.summaryCall(ctx, req)
		if err == nil {
			s.failures = 0
			s.backoff.Reset()
			return text, nil
		}
		if ctx.Err() != nil {
			return "", err
		}
		le := classify(err)
		switch {
		case le.Class == llm.ClassContextOverflow && !trimmed:
			trimmed = true
			req.Messages = withoutToolOutputs(req.Messages)
		case le.Class == llm.ClassRetryable:
			if werr := s.waitRetry(ctx, le); werr != nil {
				return "", werr
			}
		default:
			return "", err
		}
	}
}

// summaryCall streams one summary request; its tokens and cost count
// towards the session totals.
func (s *Session) summaryCall(ctx context.Context, req llm.Request) (string, error) {
	var b strings.Builder
	finished := false
	for ev := range s.cfg.Model.Stream(ctx, req) {
		switch ev.Type {
		case llm.EventTextDelta:
			b.WriteString(ev.Delta)
		case llm.EventFinishStep:
			finished = true
			if ev.Usage != nil {
				s.usage = s.usage.Add(*ev.Usage)
				s.account(*ev.Usage)
			}
		case llm.EventError:
			if ev.Err == nil {
				return "", errors.New("model stream error without detail")
			}
			return "", ev.Err
		}
	}
	if !finished {
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		return "", ErrStreamEnded
	}
	text := strings.TrimSpace(b.String())
	if text == "" {
		return "", &llm.Error{Class: llm.ClassFatal, Message: "the model returned an empty summary"}
	}
	return text, nil
}

// withoutToolOutputs copies msgs with every tool result replaced by a note.
func withoutToolOutputs(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	copy(out, msgs)
	for i := range out {
		if out[i].Role == llm.RoleTool {
			out[i].Content = omittedOutput
		}
	}
	return out
}
