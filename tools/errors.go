package tools

import "errors"

// Sentinel errors, checked with errors.Is.
var (
	// ErrBadArguments: a call's input is not the JSON object the tool takes.
	// Tools report it as an error Result; it is exported for decoders.
	ErrBadArguments = errors.New("invalid tool arguments")
	// ErrUnknownTool: the registry has no tool of that name.
	ErrUnknownTool = errors.New("unknown tool")
)
