package pipeline

import (
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
