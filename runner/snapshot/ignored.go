package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/tools/treewalk"
)

// IgnoredWrites are the files of the work tree in paths git ignores that
// were created or changed since a point in time: no snapshot holds them,
// so no patch shows them, yet they stay in the work tree (a payload in
// node_modules/.bin, a .venv, a build directory, an edited local.cfg).
type IgnoredWrites struct {
	// Paths are work-tree-relative slash paths of files and symlinks in
	// walk order (sorted by path, a directory's entries before the next
	// sibling), at most the limit IgnoredWritten was given.
	Paths []string
	// Total counts them all (≥ len(Paths)).
	Total int
}

// IgnoredWritten walks what the snapshots leave out because git ignores
// it (ignored files, everything below an ignored directory, except what
// the user's index tracks; not the excluded paths, not .git, not nested
// repositories) and returns the files and symlinks whose status changed
// at or after since (take since from FileClock): created, written,
// truncated, chmod'ed, renamed, linked or re-timed (utime sets the change
// time to now; only root can set it back, by changing the clock). A file
// that was deleted leaves no trace and is not listed; nor are directories
// on their own. At most limit paths are listed (limit ≤ 0: none), all are
// counted. On a file system whose time stamps have whole seconds (their
// nanoseconds are 0) a stamp counts from the second before since's.
//
// It costs one listing of every directory of the work tree and one lstat
// per ignored file: it is meant for the end of a run, not for each step.
// Errors: the work tree cannot be listed, or ctx ended; a directory below
// it that cannot be read is left out, as the snapshots leave it out.
func (s *Store) IgnoredWritten(ctx context.Context, since time.Time, limit int) (IgnoredWrites, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return IgnoredWrites{}, ErrClosed
	}
	tracked, err := loadTracked(s.repo, s.tracked)
	if err != nil {
		return IgnoredWrites{}, err
	}
	threshold := since.UnixNano()
	visit := func(_ *treewalk.Dir, e *treewalk.Entry) treewalk.Action {
		if s.exclude[e.Rel] {
			return treewalk.Skip
		}
		tf, isTracked := tracked.files[e.Rel]
		switch e.Type {
		case fs.ModeDir:
			if isTracked && tf.mode == modeGitlink {
				return treewalk.Skip // a submodule: its own repository
			}
			return treewalk.Descend // ignored paths may lie anywhere below
		case 0, fs.ModeSymlink:
			if e.Ignored && !isTracked {
				return treewalk.Keep
			}
		}
		return treewalk.Skip // in the snapshots, or a socket, FIFO or device
	}
	var out IgnoredWrites
	err = treewalk.Walk(ctx, treewalk.Options{
		Root: s.root, Start: ".", Prefix: s.prefix, Rules: s.base, StopAtRepos: true,
		Visit: visit,
		Work: func(dirfd int, _ *treewalk.Dir, e *treewalk.Entry) any {
			return changedSince(dirfd, e.Name, threshold)
		},
	}, func(e *treewalk.Entry) error {
		if e.IsDir() || e.Result != true {
			return nil
		}
		if out.Total++; len(out.Paths) < limit {
			out.Paths = append(out.Paths, e.Rel)
		}
		return nil
	})
	if err != nil {
		return IgnoredWrites{}, fmt.Errorf("ignored files of %s: %w", s.root, err)
	}
	return out, nil
}

// changedSince reports whether the change time (ctime) of name in the
// directory dirfd is at or after threshold (ns since the epoch); a stamp
// with no nanoseconds (a file system of whole seconds, or FAT's two)
// counts from the second before. A file gone since it was listed is not.
func changedSince(dirfd int, name string, threshold int64) bool {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return false
			}
			break
		}
	}
	ct := st.Ctim
	if ct.Nsec == 0 {
		return int64(ct.Sec) >= threshold/1e9-1
	}
	return ct.Nano() >= threshold
}
