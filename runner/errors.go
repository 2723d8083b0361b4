package runner

import (
	"errors"

	"github.com/seed43ef5acb/runner/runner/event"
)

// Sentinel errors.
var (
	// ErrNoModel: Config.Model is nil.
	ErrNoModel = errors.New("runner: no model configured")
	// ErrNoPrompt: Config.Prompt is empty.
	ErrNoPrompt = errors.New("runner: no prompt")
	// ErrDuplicateTool: two tools share a name (or one is named
	// StructuredOutput while the run has an output schema).
	ErrDuplicateTool = errors.New("runner: duplicate tool name")
	// ErrBadSchema: Config.OutputSchema is not a usable JSON Schema.
	ErrBadSchema = errors.New("runner: invalid output schema")
	// ErrAlreadyStarted: Session.Run was called twice.
	ErrAlreadyStarted = errors.New("runner: session already started")
	// ErrNotStarted: Session.Continue was called before Session.Run.
	ErrNotStarted = errors.New("runner: session not started")
	// ErrToolPanic: a tool panicked; the call becomes an error result.
	ErrToolPanic = errors.New("tool panicked")
	// ErrTimeout is the cause of the run's own deadline.
	ErrTimeout = errors.New("runner: run timed out")
	// ErrStreamEnded: the model stream ended without a finish-step.
	ErrStreamEnded = errors.New("model stream ended without finishing the step")
)

// Error is why a run did not succeed: a class (one of the event.Class
// constants, an llm.ErrorClass converted) and a message for people, with
// the cause.
type Error struct {
	Class   event.ErrorClass
	Message string
	Err     error
}

func (e *Error) Error() string { return string(e.Class) + ": " + e.Message }

func (e *Error) Unwrap() error { return e.Err }
