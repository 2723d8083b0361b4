package snapshot

import "errors"

var (
	// ErrNotDirectory means Options.WorkTree is not a directory.
	ErrNotDirectory = errors.New("snapshot: work tree is not a directory")
	// ErrStoreInWorkTree means Options.StoreDir lies inside the work tree,
	// where it would snapshot itself.
	ErrStoreInWorkTree = errors.New("snapshot: store directory is inside the work tree")
	// ErrClosed is returned by methods called after Close.
	ErrClosed = errors.New("snapshot: store is closed")
	// ErrBadTree means a Tree value is not a 40-digit hex hash or names an
	// object that is missing or not a tree.
	ErrBadTree = errors.New("snapshot: bad tree")
	// ErrCorruptCache means the persisted stat cache could not be read;
	// Track recovers by walking without it.
	ErrCorruptCache = errors.New("snapshot: corrupt stat cache")

	// errChanged means a file changed while it was read; callers re-read.
	errChanged = errors.New("file changed while reading")

	// errIndexFormat asks for go-git's full index decoder.
	errIndexFormat = errors.New("index format needs the full decoder")
)
