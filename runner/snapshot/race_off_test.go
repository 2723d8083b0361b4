//go:build !race

package snapshot

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = false
