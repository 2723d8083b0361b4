package permission

import "errors"

// Sentinel errors, checked with errors.Is.
var (
	// ErrUnknownAction: a rule's action is neither "allow" nor "deny".
	ErrUnknownAction = errors.New("unknown permission action")
	// ErrAsk: "ask" was used; headless runs have nobody to answer.
	ErrAsk = errors.New(`"ask" is not available headless`)
	// ErrBadSpec: the permissions block has the wrong shape.
	ErrBadSpec = errors.New("invalid permissions block")
	// ErrEmptyPath: a path argument was empty.
	ErrEmptyPath = errors.New("empty path")
	// ErrNULByte: a path contained a NUL byte.
	ErrNULByte = errors.New("path contains a NUL byte")
	// ErrSymlinkLoop: resolving a path followed too many symlinks.
	ErrSymlinkLoop = errors.New("too many levels of symbolic links")
)
