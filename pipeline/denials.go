package pipeline

import (
	"errors"
	"strconv"
	"strings"
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
	// refused is the first command whose output reads as the OS sandbox
	// refusing it (sandboxRefusal), "" when none did.
	refused string
}

// Emit keeps p when it is a denial, and notes the first command the
// sandbox seems to have refused.
func (d *denialLog) Emit(p event.Payload) error {
	var refused string
	switch v := p.(type) {
	case event.ToolFailed:
		if v.Tool == "bash" {
			refused = sandboxRefusal("the bash call of step "+strconv.Itoa(v.Step), v.Error)
		}
	case event.CheckFinished:
		if !v.Passed && v.Hint != "" { // failed in the sandbox
			refused = sandboxRefusal("check "+v.Name, v.Output)
		}
	}
	v, ok := p.(event.PermissionDenied)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refused == "" {
		d.refused = refused
	}
	if !ok {
		return nil
	}
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

// refusal is the first command the sandbox seems to have refused ("").
func (d *denialLog) refusal() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.refused
}

// sandboxErrors are the messages of the errors the sandbox gives a
// command it refuses: writes outside the writable paths, hidden files,
// the network.
var sandboxErrors = []string{"read-only file system", "permission denied", "operation not permitted",
	"network is unreachable", "could not resolve host", "temporary failure in name resolution"}

// sandboxRefusal is "<what>: <line>" for the first line of output that
// carries one of sandboxErrors, "" when none does.
func sandboxRefusal(what, output string) string {
	for line := range strings.Lines(output) {
		low := strings.ToLower(line)
		for _, e := range sandboxErrors {
			if strings.Contains(low, e) {
				return what + ": " + clip(line, 160)
			}
		}
	}
	return ""
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
