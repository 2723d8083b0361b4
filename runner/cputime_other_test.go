//go:build !unix

package runner

import "time"

// cpuTime is unknown here; benchmarks then report 0 CPU per step.
func cpuTime() time.Duration { return 0 }
