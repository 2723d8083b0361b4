package llm_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// newProvider returns a provider pointed at srv.
func newProvider(t testing.TB, srv *llmtest.Server, idle time.Duration) *llm.Provider {
	t.Helper()
	p, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test", HTTPClient: srv.Client(), IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// streamAll runs one call against srv and collects its events.
func streamAll(t testing.TB, srv *llmtest.Server, req llm.Request) []llm.Event {
	t.Helper()
	return collect(t, newProvider(t, srv, 0), req)
}

func collect(t testing.TB, p *llm.Provider, req llm.Request) []llm.Event {
	t.Helper()
	ctx := t.Context()
	var events []llm.Event
	for ev := range p.Stream(ctx, req) {
		events = append(events, ev)
	}
	return events
}

// checkSequence asserts the stream contract: start first; exactly one
// terminal event (finish-step or error), last; parts opened before their
// deltas and closed once; tool-call only after its tool-input-end.
func checkSequence(t testing.TB, events []llm.Event) {
	t.Helper()
	if err := sequenceError(events); err != nil {
		t.Errorf("%v\nevents: %s", err, dump(events))
	}
}

func sequenceError(events []llm.Event) error {
	if len(events) == 0 || events[0].Type != llm.EventStart {
		return fmt.Errorf("first event is not start")
	}
	last := events[len(events)-1].Type
	if last != llm.EventFinishStep && last != llm.EventError {
		return fmt.Errorf("last event is %s", last)
	}
	open := map[string]llm.EventType{} // part id → start type
	ended := map[string]bool{}
	for i, ev := range events[1:] {
		if i+2 < len(events) && (ev.Type == llm.EventFinishStep || ev.Type == llm.EventError || ev.Type == llm.EventStart) {
			return fmt.Errorf("event %d: %s before the end", i+1, ev.Type)
		}
		if err := partStep(open, ended, ev); err != nil {
			return fmt.Errorf("event %d: %w", i+1, err)
		}
	}
	for id, typ := range open {
		if typ != llm.EventToolInputStart || last != llm.EventError {
			return fmt.Errorf("part %s (%s) never closed", id, typ)
		}
	}
	return nil
}

func partStep(open map[string]llm.EventType, ended map[string]bool, ev llm.Event) error {
	starts := map[llm.EventType]llm.EventType{
		llm.EventTextDelta: llm.EventTextStart, llm.EventTextEnd: llm.EventTextStart,
		llm.EventReasoningDelta: llm.EventReasoningStart, llm.EventReasoningEnd: llm.EventReasoningStart,
		llm.EventToolInputDelta: llm.EventToolInputStart, llm.EventToolInputEnd: llm.EventToolInputStart,
	}
	switch ev.Type {
	case llm.EventTextStart, llm.EventReasoningStart, llm.EventToolInputStart:
		if _, dup := open[ev.ID]; dup || ended[ev.ID] || ev.ID == "" {
			return fmt.Errorf("%s %q reused", ev.Type, ev.ID)
		}
		open[ev.ID] = ev.Type
	case llm.EventTextDelta, llm.EventReasoningDelta, llm.EventToolInputDelta,
		llm.EventTextEnd, llm.EventReasoningEnd, llm.EventToolInputEnd:
		if open[ev.ID] != starts[ev.Type] {
			return fmt.Errorf("%s %q outside its part", ev.Type, ev.ID)
		}
		if ev.Type == llm.EventTextEnd || ev.Type == llm.EventReasoningEnd || ev.Type == llm.EventToolInputEnd {
			delete(open, ev.ID)
			ended[ev.ID] = true
		}
	case llm.EventToolCall:
		if ev.ToolCall == nil || !ended[ev.ToolCall.ID] {
			return fmt.Errorf("tool-call without a finished tool input")
		}
	case llm.EventError:
		if _, ok := ev.Err.(*llm.Error); !ok {
			return fmt.Errorf("error event with %T", ev.Err)
		}
	}
	return nil
}

func dump(events []llm.Event) string {
	s := ""
	for _, ev := range events {
		s += fmt.Sprintf("\n  %s id=%q name=%q delta=%q", ev.Type, ev.ID, ev.ToolName, ev.Delta)
		if ev.Err != nil {
			s += " err=" + ev.Err.Error()
		}
		if ev.FinishReason != "" {
			s += " finish=" + string(ev.FinishReason)
		}
	}
	return s
}
