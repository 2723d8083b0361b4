package runner

import (
	"context"
	"encoding/json"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// script is one scripted model reply: events, or a function that yields
// them (to cancel or block mid-stream).
type script struct {
	events []llm.Event
	fn     func(ctx context.Context, yield func(llm.Event) bool)
}

// fakeModel replays scripts in order and records every request. When the
// scripts run out it answers "done" with finish stop.
type fakeModel struct {
	mu       sync.Mutex
	scripts  []script
	requests []llm.Request
}

func newModel(scripts ...script) *fakeModel { return &fakeModel{scripts: scripts} }

func (m *fakeModel) Stream(ctx context.Context, req llm.Request) iter.Seq[llm.Event] {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	sc := script{events: reply(text("done"), finish(llm.FinishStop, 10, 5))}
	if len(m.scripts) > 0 {
		sc, m.scripts = m.scripts[0], m.scripts[1:]
	}
	m.mu.Unlock()
	return func(yield func(llm.Event) bool) {
		if sc.fn != nil {
			sc.fn(ctx, yield)
			return
		}
		for _, ev := range sc.events {
			if !yield(ev) {
				return
			}
		}
	}
}

func (m *fakeModel) reqs() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.requests...)
}

// reply concatenates event groups into one script.
func reply(groups ...[]llm.Event) []llm.Event {
	out := []llm.Event{{Type: llm.EventStart}}
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func sc(groups ...[]llm.Event) script { return script{events: reply(groups...)} }

func text(s string) []llm.Event {
	return []llm.Event{
		{Type: llm.EventTextStart, ID: "t"},
		{Type: llm.EventTextDelta, ID: "t", Delta: s},
		{Type: llm.EventTextEnd, ID: "t"},
	}
}

func reasoning(s string) []llm.Event {
	return []llm.Event{
		{Type: llm.EventReasoningStart, ID: "r"},
		{Type: llm.EventReasoningDelta, ID: "r", Delta: s},
		{Type: llm.EventReasoningEnd, ID: "r"},
	}
}

func call(id, name, args string) []llm.Event {
	tc := &llm.ToolCall{ID: id, Name: name, NameAsSent: name, Arguments: json.RawMessage(args)}
	if !json.Valid([]byte(args)) {
		tc.Arguments, tc.ArgumentsRaw, tc.ArgumentsInvalid = nil, args, true
	}
	return []llm.Event{
		{Type: llm.EventToolInputStart, ID: id, ToolName: name},
		{Type: llm.EventToolInputDelta, ID: id, ToolName: name, Delta: args},
		{Type: llm.EventToolInputEnd, ID: id, ToolName: name},
		{Type: llm.EventToolCall, ID: id, ToolCall: tc},
	}
}

func finish(reason llm.FinishReason, in, out int64) []llm.Event {
	return []llm.Event{{Type: llm.EventFinishStep, FinishReason: reason,
		Usage: &llm.Usage{InputTokens: in, OutputTokens: out}}}
}

func fail(class llm.ErrorClass, retryAfter time.Duration) []llm.Event {
	return []llm.Event{{Type: llm.EventError, Err: &llm.Error{Class: class, Status: 429,
		Message: "scripted " + string(class), RetryAfter: retryAfter}}}
}

// fakeTool is a tool whose behaviour is a function; it counts its calls.
type fakeTool struct {
	name  string
	mu    sync.Mutex
	calls []tools.Call
	run   func(ctx context.Context, c tools.Call) (tools.Result, error)
}

func (f *fakeTool) Info() tools.Info {
	return tools.Info{Name: f.name, Description: "fake " + f.name,
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
}

func (f *fakeTool) Run(ctx context.Context, c tools.Call) (tools.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	if f.run == nil {
		return tools.Result{Output: f.name + " ok " + string(c.Input)}, nil
	}
	return f.run(ctx, c)
}

func (f *fakeTool) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// recSink records events.
type recSink struct {
	mu     sync.Mutex
	events []event.Payload
}

func (r *recSink) Emit(p event.Payload) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, p)
	return nil
}

func (r *recSink) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.EventType()
	}
	return out
}

func (r *recSink) of(typ string) []event.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Payload
	for _, e := range r.events {
		if e.EventType() == typ {
			out = append(out, e)
		}
	}
	return out
}

// fixedPricer charges a fixed price per call, or nil for unknown.
type fixedPricer struct {
	perCall *float64
	window  int
}

func (p fixedPricer) Cost(string, llm.Usage) *float64 { return p.perCall }
func (p fixedPricer) ContextWindow(string) int        { return p.window }

// allowPolicy allows every permission it is asked about.
type allowPolicy struct{}

func (allowPolicy) Evaluate(perm, pattern string) permission.Decision {
	r := permission.Rule{Permission: perm, Pattern: "*", Action: permission.Allow}
	return permission.Decision{Allowed: true, Permission: perm, Pattern: pattern, Rule: &r, Reason: "allowed"}
}

// testConfig is a config with instant backoff and a fixed clock.
func testConfig(m Model, sink event.Sink, ts ...tools.Tool) Config {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return Config{
		Model:     m,
		ModelName: "fake-model",
		WorkTree:  "/work/tree",
		Platform:  "linux/amd64",
		Prompt:    "Fix the bug.",
		Tools:     ts,
		Sink:      sink,
		Backoff:   Backoff{Base: time.Microsecond, Max: time.Millisecond, Attempts: 3},
		Now:       func() time.Time { return start },
	}
}

func ptr[T any](v T) *T { return &v }

// runTest runs a session and fails the test on a configuration error.
func runTest(t *testing.T, cfg Config) Result {
	t.Helper()
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}
