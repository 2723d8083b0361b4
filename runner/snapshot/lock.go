package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockPoll is how often a busy store lock is retried.
const lockPoll = 50 * time.Millisecond

// acquireLock takes an exclusive flock on dir/lock, waiting until it is free
// or ctx ends; onWait (when set) is told once, with the holder's line,
// before the wait. flock locks belong to the open file, so two Stores in
// one process exclude each other too. The holder writes "pid N" into the
// file, for the next one's onWait.
func acquireLock(ctx context.Context, dir string, onWait func(holder string)) (*os.File, error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open store lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			// Who holds it, for a run that waits; the lock works without it.
			if f.Truncate(0) == nil {
				_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d\n", os.Getpid())), 0)
			}
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock store %s: %w", dir, err)
		}
		if onWait != nil && errors.Is(err, syscall.EWOULDBLOCK) {
			holder, _ := os.ReadFile(path) // "" when unreadable: the holder is unknown
			onWait(strings.TrimSpace(string(holder)))
			onWait = nil
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("wait for store lock %s: %w", dir, context.Cause(ctx))
		case <-time.After(lockPoll):
		}
	}
}
