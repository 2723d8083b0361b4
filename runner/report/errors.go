package report

import "errors"

// Sentinel errors of this package.
var (
	// ErrNoRunFinished is returned by WriteResult for a record that is not
	// run.finished.
	ErrNoRunFinished = errors.New("not a run.finished record")
	// ErrNoEvents is returned by Load and WriteOut when a log holds no
	// records.
	ErrNoEvents = errors.New("event log is empty")
	// ErrFormat is returned by Render for an unknown format.
	ErrFormat = errors.New("unknown report format")
)
