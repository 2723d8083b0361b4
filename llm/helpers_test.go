package llm_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

func mustNew(t testing.TB, cfg llm.Config) *llm.Provider {
	t.Helper()
	p, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// eventsDiff compares event sequences; errors compare by their text.
func eventsDiff(a, b any) string {
	return cmp.Diff(a, b, cmp.Comparer(func(x, y error) bool {
		if x == nil || y == nil {
			return x == nil && y == nil
		}
		return x.Error() == y.Error()
	}))
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

// checkSequence asserts the stream contract (llm.CheckSequence) and, for
// this provider, that every tool-call follows its own tool-input-end.
func checkSequence(t testing.TB, events []llm.Event) {
	t.Helper()
	if err := llm.CheckSequence(events); err != nil {
		t.Errorf("%v\nevents: %s", err, dump(events))
	}
	ended := map[string]bool{}
	started := map[string]string{} // call id -> name in tool-input-start
	for _, ev := range events {
		switch ev.Type {
		case llm.EventToolInputStart:
			started[ev.ID] = ev.ToolName
		case llm.EventToolInputEnd:
			ended[ev.ID] = true
		case llm.EventToolCall:
			if !ended[ev.ToolCall.ID] {
				t.Errorf("tool-call %q without its tool input\nevents: %s", ev.ToolCall.ID, dump(events))
			}
			if n := started[ev.ToolCall.ID]; n != ev.ToolCall.NameAsSent {
				t.Errorf("tool-call %q is named %q but started as %q\nevents: %s", ev.ToolCall.ID, ev.ToolCall.NameAsSent, n, dump(events))
			}
		}
	}
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
