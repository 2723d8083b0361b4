package llm

// SequenceError exposes the stream-contract checker to the external tests.
func SequenceError(events []Event) error { return sequenceError(events) }
