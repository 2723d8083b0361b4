//go:build linux

package snapshot

import (
	"time"

	"golang.org/x/sys/unix"
)

// FileClock is the time to pass IgnoredWritten as since before the
// changes it should see: CLOCK_REALTIME_COARSE, the clock the kernel
// stamps inodes from (or a finer one, never earlier), so a file changed
// after FileClock returns has a change time at or after it; time.Now can
// be a few milliseconds ahead of that stamp.
func FileClock() time.Time {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts); err != nil {
		return time.Now().Add(-10 * time.Millisecond) // a jiffy at HZ=100
	}
	return time.Unix(ts.Unix())
}
