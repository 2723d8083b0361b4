//go:build !linux

package snapshot

import "time"

// FileClock is the time to pass IgnoredWritten as since before the
// changes it should see: off Linux time.Now, 10 ms back for a clock that
// stamps files from a coarser tick.
func FileClock() time.Time { return time.Now().Add(-10 * time.Millisecond) }
