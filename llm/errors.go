package llm

import "errors"

// Sentinel errors, wrapped in an *Error's Err and checked with errors.Is.
var (
	// ErrIncompleteStream: the body ended with neither a finish_reason nor
	// [DONE]; the turn is partial (retryable).
	ErrIncompleteStream = errors.New("incomplete stream")
	// ErrIdleTimeout: no bytes arrived within the per-chunk idle timeout
	// (retryable).
	ErrIdleTimeout = errors.New("stream idle timeout")
	// ErrCassetteExhausted: a replayed run made more calls than were recorded
	// (fatal: re-record).
	ErrCassetteExhausted = errors.New("cassette exhausted")
	// ErrCassetteMismatch: a replayed run made a call that differs from the
	// recorded one (fatal: re-record).
	ErrCassetteMismatch = errors.New("cassette mismatch")
	// ErrBadRequest: the Request cannot be sent (no model, bad tool schema).
	ErrBadRequest = errors.New("bad request")
	// ErrBrokenSequence: events break the stream contract (CheckSequence).
	ErrBrokenSequence = errors.New("broken event sequence")
	// ErrConfig: the provider Config is unusable.
	ErrConfig = errors.New("bad provider config")
)
