// Package mirror keeps a second copy of what the runner writes into files
// that the commands it runs could also write (its out dir inside the work
// tree where no sandbox layer makes it read-only: Landlock only), in a
// directory they cannot write (the run's temporary directory), and puts
// the files back from it once the commands are gone: Set.Restore compares
// every file with its copy byte for byte, rewrites the changed and
// removed ones, removes entries nobody created through the Set in the
// watched directories, and names every path it touched.
//
// A File writes each byte to both copies (two write calls), so nothing is
// kept in memory and the out dir stays live to read (tail -f) while the
// run goes on. A Set that was not started writes plain files.
//
// Every path below the watched directories' top is opened beneath it
// without following a symlink (internal/safefs): a link a command put in
// a file's or a directory's place is replaced, never written through.
//
// Imports: internal/safefs.
package mirror

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// File is a file the runner writes, mirrored once its Set is started. Its
// methods are safe for concurrent use. Write writes p to the file, then
// to the mirror; an error of either is returned (a short write to the
// file is returned as is, a failed write to the mirror as a full write
// with the error, so a caller that cuts back a failed write, as the
// event log does with Truncate, cuts back both).
type File struct {
	mu     sync.Mutex
	set    *Set
	path   string   // as created
	f      *os.File // the file (replaced by Restore when it rewrote it)
	m      *os.File // the mirror; nil before the Set starts
	mpath  string   // the mirror's path ("" before the Set starts)
	loc    loc      // where path is opened without following a symlink
	closed bool
}

// Name is the file's path as it was created.
func (f *File) Name() string { return f.path }

// Write implements io.Writer.
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	n, err := f.f.Write(p)
	if err != nil || f.m == nil {
		return n, err
	}
	if _, err := f.m.Write(p); err != nil {
		return n, fmt.Errorf("mirror of %s: %w", f.path, err)
	}
	return n, nil
}

// WriteString implements io.StringWriter.
func (f *File) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// Seek seeks the file and, to the same offset, the mirror.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	off, err := f.f.Seek(offset, whence)
	if err != nil || f.m == nil {
		return off, err
	}
	if _, err := f.m.Seek(off, io.SeekStart); err != nil {
		return off, fmt.Errorf("mirror of %s: %w", f.path, err)
	}
	return off, nil
}

// Truncate truncates the file and the mirror to size bytes.
func (f *File) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.f.Truncate(size); err != nil || f.m == nil {
		return err
	}
	if err := f.m.Truncate(size); err != nil {
		return fmt.Errorf("mirror of %s: %w", f.path, err)
	}
	return nil
}

// Sync syncs the file (the mirror is scratch: not synced).
func (f *File) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Sync()
}

// Close closes both copies; the mirror stays on disk for Restore. Close
// is idempotent.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	err := f.f.Close()
	if f.m != nil {
		err = errors.Join(err, f.m.Close())
	}
	return err
}

// Remove closes the file and removes it and its mirror: the runner
// decided not to keep it (bash's full output of a command whose output
// was not cut).
func (f *File) Remove() error {
	_ = f.Close()
	f.set.forget(f)
	f.mu.Lock()
	mpath := f.mpath
	f.mu.Unlock()
	if mpath != "" {
		_ = os.Remove(mpath)
	}
	return f.loc.fs.Remove(f.loc.rel)
}

// start begins mirroring into the file m: the bytes the file holds so far
// are copied first. Called by Set.Start before any command runs, so what
// the file holds is what the runner wrote.
func (f *File) start(m *os.File) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		if off, err := f.f.Seek(0, io.SeekCurrent); err == nil {
			src, err := f.loc.fs.Open(f.loc.rel)
			if err != nil {
				return err
			}
			_, err = io.Copy(m, io.LimitReader(src, off))
			_ = src.Close()
			if err != nil {
				return err
			}
			f.m, f.mpath = m, m.Name()
			return nil
		}
	}
	src, err := f.loc.fs.Open(f.loc.rel) // closed, or not seekable: copy what is there
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := io.Copy(m, src); err != nil {
		return err
	}
	f.m, f.mpath = m, m.Name()
	if f.closed {
		return m.Close()
	}
	return nil
}
