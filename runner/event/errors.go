package event

import "errors"

// Sentinel errors of this package, checked with errors.Is.
var (
	// ErrClosed is returned by Emit after the Writer was closed.
	ErrClosed = errors.New("event writer closed")
	// ErrTorn is returned by Emit after a failed write left part of a
	// line in a log that cannot be cut back (a pipe): nothing more is
	// written, so only the last line is torn.
	ErrTorn = errors.New("event log ends in a torn line")
	// ErrNilPayload is returned by Emit for a nil payload.
	ErrNilPayload = errors.New("nil event payload")
	// ErrMalformed marks a log line that is not a valid event record.
	ErrMalformed = errors.New("malformed event line")
	// ErrVersion marks a log line of an unsupported schema version.
	ErrVersion = errors.New("unsupported event schema version")
	// ErrUnknownType marks a record whose type this version does not know.
	ErrUnknownType = errors.New("unknown event type")
	// ErrInvalid marks a line that does not validate against the schema.
	ErrInvalid = errors.New("event line does not match schema")
)
