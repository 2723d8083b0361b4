package pipeline

import (
	"errors"
	"sync"

	"github.com/seed43ef5acb/runner/runner/event"
)

// denialLog is the sink that keeps the run's permission.denied events for
// run.finished (its denials and denied_calls, hence result.json, the
// summary and the action's denials outputs). It sits behind the redactor,
// so what it keeps is what the log says. Emit is safe for concurrent use.
type denialLog struct {
	mu    sync.Mutex
	count int
	calls []event.PermissionDenied // the first event.MaxDeniedCalls
}

// Emit keeps p when it is a denial.
func (d *denialLog) Emit(p event.Payload) error {
	v, ok := p.(event.PermissionDenied)
	if !ok {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.count++
	if len(d.calls) < event.MaxDeniedCalls {
		d.calls = append(d.calls, v)
	}
	return nil
}

// snapshot returns the count and a copy of the calls kept (never nil, so
// run.finished says [] rather than null).
func (d *denialLog) snapshot() (int, []event.PermissionDenied) {
	if d == nil {
		return 0, []event.PermissionDenied{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count, append([]event.PermissionDenied{}, d.calls...)
}

// logGuard is the event log's place among the sinks: it notes the first
// write that failed (a full disk: the writer has cut the log back to its
// last complete line) and calls stop with it once, so the run ends
// instead of going on unrecorded. Emit is safe for concurrent use.
type logGuard struct {
	next event.Sink
	stop func(error)
	mu   sync.Mutex
	err  error
}

// Emit passes p on and notes a failure.
func (g *logGuard) Emit(p event.Payload) error {
	err := g.next.Emit(p)
	if err == nil || errors.Is(err, event.ErrClosed) {
		return err
	}
	g.mu.Lock()
	first := g.err == nil
	if first {
		g.err = err
	}
	g.mu.Unlock()
	if first && g.stop != nil {
		g.stop(err)
	}
	return err
}

// failed is the first write error, nil when every line was written.
func (g *logGuard) failed() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
