package llm

import (
	"errors"
	"fmt"
)

// CheckSequence checks one call's events against the stream contract, for
// tests of providers and of fakes that stand in for them: start first;
// exactly one terminal event (finish-step or error), last; text, reasoning
// and tool-input parts opened once before their deltas and closed once (a
// tool input may stay open only when the stream ends in an error);
// a tool-call not before the end of its tool input (a fake may send a
// tool-call with no tool input at all); an error event's Err is an *Error.
// It returns nil when the sequence keeps the contract, else an error
// wrapping ErrBrokenSequence.
func CheckSequence(events []Event) error {
	if len(events) == 0 || events[0].Type != EventStart {
		return fmt.Errorf("%w: first event is not start", ErrBrokenSequence)
	}
	last := events[len(events)-1].Type
	if last != EventFinishStep && last != EventError {
		return fmt.Errorf("%w: last event is %s", ErrBrokenSequence, last)
	}
	open := map[string]EventType{} // part id → start type
	ended := map[string]bool{}
	for i, ev := range events[1:] {
		if i+2 < len(events) && (ev.Type == EventFinishStep || ev.Type == EventError || ev.Type == EventStart) {
			return fmt.Errorf("%w: event %d: %s before the end", ErrBrokenSequence, i+1, ev.Type)
		}
		if err := partStep(open, ended, ev); err != nil {
			return fmt.Errorf("%w: event %d: %w", ErrBrokenSequence, i+1, err)
		}
	}
	for id, typ := range open {
		if typ != EventToolInputStart || last != EventError {
			return fmt.Errorf("%w: part %s (%s) never closed", ErrBrokenSequence, id, typ)
		}
	}
	return nil
}

func partStep(open map[string]EventType, ended map[string]bool, ev Event) error {
	starts := map[EventType]EventType{
		EventTextDelta: EventTextStart, EventTextEnd: EventTextStart,
		EventReasoningDelta: EventReasoningStart, EventReasoningEnd: EventReasoningStart,
		EventToolInputDelta: EventToolInputStart, EventToolInputEnd: EventToolInputStart,
	}
	switch ev.Type {
	case EventTextStart, EventReasoningStart, EventToolInputStart:
		if _, dup := open[ev.ID]; dup || ended[ev.ID] || ev.ID == "" {
			return fmt.Errorf("%s %q reused", ev.Type, ev.ID)
		}
		open[ev.ID] = ev.Type
	case EventTextDelta, EventReasoningDelta, EventToolInputDelta,
		EventTextEnd, EventReasoningEnd, EventToolInputEnd:
		if open[ev.ID] != starts[ev.Type] {
			return fmt.Errorf("%s %q outside its part", ev.Type, ev.ID)
		}
		if ev.Type == EventTextEnd || ev.Type == EventReasoningEnd || ev.Type == EventToolInputEnd {
			delete(open, ev.ID)
			ended[ev.ID] = true
		}
	case EventToolCall:
		if ev.ToolCall == nil {
			return errors.New("tool-call without a ToolCall")
		}
		if _, inInput := open[ev.ToolCall.ID]; inInput {
			return fmt.Errorf("tool-call %q before its tool-input-end", ev.ToolCall.ID)
		}
	case EventError:
		var e *Error
		if !errors.As(ev.Err, &e) {
			return fmt.Errorf("error event with %T, not an *llm.Error", ev.Err)
		}
	}
	return nil
}
