package runner

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/seed43ef5acb/runner/llm"
)

// drainGrace bounds how long a cancelled step waits for the model stream
// to end (the provider stops at once on a cancelled context; one that
// ignores it is not waited for longer) before taking what it delivered.
const drainGrace = 250 * time.Millisecond

// readAhead reads a model stream in its own goroutine into a queue, so the
// provider keeps receiving while the consumer runs a tool call (tool calls
// run as the stream delivers them): the rest of the reply, and above all
// the usage that follows the call in the stream, is in hand when the run
// is cancelled or times out during the tool. Events come out in order.
// One consumer goroutine calls next, rest and stop.
type readAhead struct {
	mu      sync.Mutex
	queue   []llm.Event
	stopped bool // the consumer is gone: the next yield returns false
	panic   any  // what the stream panicked with, re-raised by next

	wake chan struct{} // 1-buffered: an event was queued
	done chan struct{} // closed when the stream's iterator returned
}

// readStream starts reading seq.
func readStream(seq iter.Seq[llm.Event]) *readAhead {
	r := &readAhead{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go r.pump(seq)
	return r
}

func (r *readAhead) pump(seq iter.Seq[llm.Event]) {
	defer close(r.done)
	defer func() {
		if p := recover(); p != nil {
			r.mu.Lock()
			r.panic = fmt.Sprintf("model stream: %v", p)
			r.mu.Unlock()
		}
	}()
	seq(func(ev llm.Event) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.stopped {
			return false
		}
		r.queue = append(r.queue, ev)
		select {
		case r.wake <- struct{}{}:
		default:
		}
		return true
	})
}

// next returns the next event; false when the stream has ended and every
// event was taken, or ctx is done (the events left stay for rest). A panic
// of the stream is raised here, in the consumer's goroutine.
func (r *readAhead) next(ctx context.Context) (llm.Event, bool) {
	for {
		if ctx.Err() != nil {
			return llm.Event{}, false
		}
		if ev, ok := r.take(); ok {
			return ev, true
		}
		select {
		case <-r.wake:
		case <-r.done:
			if ev, ok := r.take(); ok {
				return ev, true
			}
			r.raise()
			return llm.Event{}, false
		case <-ctx.Done():
			return llm.Event{}, false
		}
	}
}

func (r *readAhead) take() (llm.Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		return llm.Event{}, false
	}
	ev := r.queue[0]
	r.queue[0] = llm.Event{}
	r.queue = r.queue[1:]
	return ev, true
}

func (r *readAhead) raise() {
	r.mu.Lock()
	p := r.panic
	r.mu.Unlock()
	if p != nil {
		panic(p)
	}
}

// rest waits up to grace for the stream to end, stops it, and returns the
// events it delivered that next did not return.
func (r *readAhead) rest(grace time.Duration) []llm.Event {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-r.done:
	case <-timer.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	out := r.queue
	r.queue = nil
	return out
}

// stop tells the stream to end at its next event (the provider then
// cancels its call). It does not wait.
func (r *readAhead) stop() {
	r.mu.Lock()
	r.stopped = true
	r.queue = nil
	r.mu.Unlock()
}
