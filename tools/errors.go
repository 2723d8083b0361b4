package tools

import (
	"errors"
	"io/fs"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrBadArguments: a call's input is not the JSON object the tool takes.
	// Tools report it as an error Result; it is exported for decoders.
	ErrBadArguments = errors.New("invalid tool arguments")
	// ErrHardLink: write or edit refused a file with several hard links.
	ErrHardLink = errors.New("the file has other hard links")
	// errStopWalk ends a walk early without an error (enough results).
	errStopWalk = fs.SkipAll
	// errTimedOut is the cancel cause when a command runs past its timeout.
	errTimedOut = errors.New("command timed out")
)
