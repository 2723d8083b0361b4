package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/internal/treewalk"
)

// IgnoredWrites are the files of the work tree in paths git ignores that
// were created or changed since a point in time: no snapshot holds them,
// so no patch shows them, yet they stay in the work tree (a payload in
// node_modules/.bin, a .venv, a build directory, an edited local.cfg).
type IgnoredWrites struct {
	// Paths are work-tree-relative slash paths in walk order (by name, a
	// directory's entries before its next sibling), at most the limit
	// IgnoredWritten was given: files and symlinks, and ignored
	// directories (ending in "/") that changed with nothing listed below
	// them.
	Paths []string
	// Total counts them all (≥ len(Paths)).
	Total int
}

// changedDir marks, as a treewalk entry's Data, an ignored directory
// whose own change time is at or after the threshold.
type changedDir struct{}

// IgnoredWritten walks what the snapshots leave out because git ignores
// it (ignored files, everything below an ignored directory, except what
// the user's index tracks; not the excluded paths, not .git, not nested
// repositories) and returns the files and symlinks whose status changed
// at or after since (take since from FileClock): created, written,
// truncated, chmod'ed, renamed, linked or re-timed (utime sets the change
// time to now; only root can set it back, by changing the clock). An
// ignored directory that changed with no file listed below it is listed
// itself, with a trailing "/": one moved or renamed in (its files keep
// their change times) or one a file was deleted from (a deletion in a
// directory that is not ignored leaves no trace). At most limit paths are
// listed (limit ≤ 0: none), all are counted. On a file system whose time
// stamps have whole seconds (their nanoseconds are 0) a stamp counts from
// the second before since's.
//
// It costs one listing of every directory of the work tree and one lstat
// per ignored file and directory: it is meant for the end of a run, not
// for each step. Errors: the work tree cannot be listed, or ctx ended; a
// directory below it that cannot be read is left out, as the snapshots
// leave it out.
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
			if e.Ignored && changedSince(unix.AT_FDCWD, filepath.Join(s.root, e.Rel), threshold) {
				e.Data = changedDir{}
			}
			return treewalk.Descend // ignored paths may lie anywhere below
		case 0, fs.ModeSymlink:
			if e.Ignored && !isTracked {
				return treewalk.Keep
			}
		}
		return treewalk.Skip // in the snapshots, or a socket, FIFO or device
	}
	l := ignoredList{limit: limit}
	err = treewalk.Walk(ctx, treewalk.Options{
		Root: s.root, Start: ".", Prefix: s.prefix, Rules: s.base, StopAtRepos: true,
		Visit: visit,
		Work: func(dirfd int, _ *treewalk.Dir, e *treewalk.Entry) any {
			return changedSince(dirfd, e.Name, threshold)
		},
	}, func(e *treewalk.Entry) error {
		l.entry(e)
		return nil
	})
	if err != nil {
		return IgnoredWrites{}, fmt.Errorf("ignored files of %s: %w", s.root, err)
	}
	l.leave("")
	return l.out, nil
}

// ignoredList gathers IgnoredWritten's result from the walk's entries in
// walk order: changed files at once, a changed directory once its
// entries are done and none of them was listed.
type ignoredList struct {
	limit int
	out   IgnoredWrites
	open  []openDir // the changed directories the current entry lies in, outermost first
}

// openDir is a changed directory being walked; covered: something below
// it was listed.
type openDir struct {
	rel     string
	covered bool
}

func (l *ignoredList) entry(e *treewalk.Entry) {
	l.leave(e.Rel)
	switch {
	case e.IsDir():
		if _, ok := e.Data.(changedDir); ok {
			l.open = append(l.open, openDir{rel: e.Rel})
		}
	case e.Result == true:
		l.add(e.Rel)
	}
}

// leave closes the open directories rel does not lie in, listing those
// with nothing listed below them.
func (l *ignoredList) leave(rel string) {
	for n := len(l.open); n > 0 && !strings.HasPrefix(rel, l.open[n-1].rel+"/"); n = len(l.open) {
		d := l.open[n-1]
		l.open = l.open[:n-1]
		if !d.covered {
			l.add(d.rel + "/")
		}
	}
}

// add lists rel (counted always, named up to the limit); the open
// directories, all above it, are covered.
func (l *ignoredList) add(rel string) {
	if l.out.Total++; len(l.out.Paths) < l.limit {
		l.out.Paths = append(l.out.Paths, rel)
	}
	for i := range l.open {
		l.open[i].covered = true
	}
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
