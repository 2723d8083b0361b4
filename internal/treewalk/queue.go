package treewalk

import (
	"sync"
	"sync/atomic"
)

// taskQueue is a LIFO stack of tasks shared by the workers: pushing a
// directory's children in reverse keeps the work close to walk order.
// After stop, tasks still run (to release what they hold) but do no work.
type taskQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	tasks    []func()
	stopping atomic.Bool
}

// push adds tasks so that the first one runs first.
func (q *taskQueue) push(tasks ...func()) {
	if len(tasks) == 0 {
		return
	}
	q.mu.Lock()
	for i := len(tasks) - 1; i >= 0; i-- {
		q.tasks = append(q.tasks, tasks[i])
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *taskQueue) tryPop() (func(), bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.popLocked()
}

func (q *taskQueue) popLocked() (func(), bool) {
	n := len(q.tasks)
	if n == 0 {
		return nil, false
	}
	t := q.tasks[n-1]
	q.tasks[n-1] = nil
	q.tasks = q.tasks[:n-1]
	return t, true
}

// work runs tasks until the queue is empty after stop.
func (q *taskQueue) work() {
	q.mu.Lock()
	for {
		t, ok := q.popLocked()
		if !ok {
			if q.stopping.Load() {
				break
			}
			q.cond.Wait()
			continue
		}
		q.mu.Unlock()
		t()
		q.mu.Lock()
	}
	q.mu.Unlock()
}

func (q *taskQueue) stopped() bool { return q.stopping.Load() }

// stop makes the remaining tasks no-ops and lets the workers end once the
// queue is empty.
func (q *taskQueue) stop() {
	q.mu.Lock()
	q.stopping.Store(true)
	q.mu.Unlock()
	q.cond.Broadcast()
}
