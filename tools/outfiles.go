package tools

import (
	"io"
	"os"
)

// OutputFiles makes the files the tools write into the out dir (bash's
// and MCP results' full output, MCP servers' stderr). The pipeline passes
// one that mirrors every byte out of the commands' reach, so that a
// command cannot change them unnoticed where the out dir is writable to
// it (internal/mirror); nil makes plain files. Its methods are called
// from the goroutine of the tool call and must be safe for concurrent use.
type OutputFiles interface {
	// MkdirAll is os.MkdirAll.
	MkdirAll(dir string) error
	// CreateTemp is os.CreateTemp.
	CreateTemp(dir, pattern string) (OutputFile, error)
	// Create is os.Create.
	Create(path string) (OutputFile, error)
}

// OutputFile is a file OutputFiles made.
type OutputFile interface {
	io.Writer
	// Name is the file's path.
	Name() string
	// Close closes it, kept.
	Close() error
	// Remove closes and removes it: not kept.
	Remove() error
}

// plainFiles are OutputFiles on the file system as they are.
type plainFiles struct{}

// plainFile is an *os.File that can Remove itself.
type plainFile struct{ *os.File }

func (f plainFile) Remove() error {
	_ = f.Close()
	return os.Remove(f.Name())
}

func (plainFiles) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (plainFiles) CreateTemp(dir, pattern string) (OutputFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return plainFile{f}, nil
}

func (plainFiles) Create(path string) (OutputFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return plainFile{f}, nil
}

// OrPlain is files, or plain files when it is nil.
func OrPlain(files OutputFiles) OutputFiles {
	if files == nil {
		return plainFiles{}
	}
	return files
}
