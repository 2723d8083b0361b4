package llm

import "fmt"

// sequenceError checks the stream contract: start first; exactly one
// terminal event (finish-step or error), last; parts opened before their
// deltas and closed once; tool-call only after its tool-input-end; an error
// event carries an *Error.
func sequenceError(events []Event) error {
	if len(events) == 0 || events[0].Type != EventStart {
		return fmt.Errorf("first event is not start")
	}
	last := events[len(events)-1].Type
	if last != EventFinishStep && last != EventError {
		return fmt.Errorf("last event is %s", last)
	}
	open := map[string]EventType{} // part id → start type
	ended := map[string]bool{}
	for i, ev := range events[1:] {
		if i+2 < len(events) && (ev.Type == EventFinishStep || ev.Type == EventError || ev.Type == EventStart) {
			return fmt.Errorf("event %d: %s before the end", i+1, ev.Type)
		}
		if err := partStep(open, ended, ev); err != nil {
			return fmt.Errorf("event %d: %w", i+1, err)
		}
	}
	for id, typ := range open {
		if typ != EventToolInputStart || last != EventError {
			return fmt.Errorf("part %s (%s) never closed", id, typ)
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
		if ev.ToolCall == nil || !ended[ev.ToolCall.ID] {
			return fmt.Errorf("tool-call without a finished tool input")
		}
	case EventError:
		if _, ok := ev.Err.(*Error); !ok {
			return fmt.Errorf("error event with %T", ev.Err)
		}
	}
	return nil
}
