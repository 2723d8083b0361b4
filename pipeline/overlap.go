package pipeline

import (
	"context"
	"errors"
	"sync"

	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// The base snapshot of a large tree takes as long as a model request, so
// the agent starts while it is being recorded (baseSnapshot). Three
// things wait for it:
//   - run.started, which names the base tree, and the history's header:
//     the session's events and history records are held (heldStart) and
//     written after them;
//   - the first tool that may change the tree (every tool but the
//     read-only builtins: baseTools);
//   - the end of the agent stage, and the final stages.
//
// The log reads as if the base had been recorded first: run.started is
// its first record and the events follow in the order they were emitted.

// readOnlyTool reports the builtin tools that never write the work tree:
// they may run before the base tree is recorded.
func readOnlyTool(name string) bool {
	switch name {
	case "glob", "grep", "list", "read":
		return true
	}
	return false
}

// heldStart is the agent's event sink and history before run.started is
// written: it keeps what the session emits and records, in order, until
// releaseStart writes run.started and the header, then passes through.
type heldStart struct {
	next   event.Sink
	once   sync.Once
	err    error // the base snapshot's or the history's error, once released
	logErr error // writing run.started or what was held failed

	mu      sync.Mutex
	holding bool
	events  []event.Payload
	records []runner.HistoryRecord
	history runner.History // the history once released; nil: none is kept
}

func newHeldStart(next event.Sink) *heldStart { return &heldStart{next: next, holding: true} }

// Emit implements event.Sink: held until release, then written.
func (h *heldStart) Emit(p event.Payload) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holding {
		h.events = append(h.events, p)
		return nil
	}
	return h.next.Emit(p)
}

// Record implements runner.History: held until release, then written.
func (h *heldStart) Record(rec runner.HistoryRecord) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.holding:
		h.records = append(h.records, rec)
		return nil
	case h.history == nil: // the base failed: no history is kept
		return nil
	}
	return h.history.Record(rec)
}

// release writes started first, then what was held, and passes later
// events to next and records to history (nil: dropped).
func (h *heldStart) release(started event.Payload, history runner.History) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.next.Emit(started)
	for _, p := range h.events {
		err = errors.Join(err, h.next.Emit(p))
	}
	if history != nil {
		for _, rec := range h.records {
			err = errors.Join(err, history.Record(rec))
		}
	}
	h.holding, h.events, h.records, h.history = false, nil, nil, history
	return err
}

// releaseStart waits for the base tree and, when the session's start was
// held, writes run.started, creates the history and writes what was held.
// It returns the base snapshot's error, or the history's, which end the
// run as the stages they were in did. Safe for concurrent use; only the
// first call writes.
func (r *execRun) releaseStart(ctx context.Context) error {
	h := r.held
	if h == nil {
		return r.waitBase()
	}
	h.once.Do(func() {
		h.err = r.waitBase()
		r.started = true
		var history runner.History
		if h.err == nil {
			if h.err = r.openHistory(ctx); h.err == nil && r.history != nil {
				history = r.history
			}
		}
		h.logErr = h.release(r.startedEvent(), history)
	})
	return h.err
}

// baseTools makes every tool but the read-only builtins wait for the base
// tree before it runs; a base snapshot that failed stops the run.
func (r *execRun) baseTools(ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		if _, _, mcp := tools.OriginOf(t); !mcp && readOnlyTool(t.Info().Name) {
			out[i] = t
			continue
		}
		out[i] = &afterBaseTool{tool: t, r: r}
	}
	return out
}

// afterBaseTool runs its tool once the base tree is recorded (baseTools).
type afterBaseTool struct {
	tool tools.Tool
	r    *execRun
}

func (t *afterBaseTool) Info() tools.Info { return t.tool.Info() }

// Unwrap returns the wrapped tool (for tools.OriginOf).
func (t *afterBaseTool) Unwrap() tools.Tool { return t.tool }

// Run waits for the base tree, then runs the tool.
func (t *afterBaseTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	if err := t.r.releaseStart(ctx); err != nil {
		if t.r.stopMain != nil {
			t.r.stopMain(err)
		}
		return tools.Result{}, err
	}
	return t.tool.Run(ctx, call)
}
