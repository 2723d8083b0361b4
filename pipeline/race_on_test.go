//go:build race

package pipeline

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = true
