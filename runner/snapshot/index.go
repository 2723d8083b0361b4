package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/seed43ef5acb/runner/internal/gitignore"
	"github.com/seed43ef5acb/runner/internal/safefs"
)

// trackedSet is what the snapshot needs from the user's index: the tracked
// paths (kept even when an ignore rule matches them) and the directories
// holding them, relative to the work tree.
type trackedSet struct {
	files map[string]trackedFile
	dirs  map[string]bool
	sig   fileSig // the index file's stat when read
	mtime int64   // index file mtime, ns: git's racy-timestamp reference
}

// trackedFile is one index entry.
type trackedFile struct {
	mode   uint32
	hash   plumbing.Hash
	st     statInfo
	seedOK bool // stage 0, not intent-to-add nor skip-worktree
}

// fileSig identifies a version of a file by its stat.
type fileSig struct {
	size, mtime, ctime int64
	ino                uint64
}

func sigOf(fi os.FileInfo) fileSig {
	s := fileSig{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	s.ctime, s.ino = statCtimeIno(fi)
	return s
}

// loadTracked reads the user's index read-only. It returns prev when the
// index file has not changed since prev was read, and an empty set when
// there is no repository or no index.
func loadTracked(repo *gitignore.Repo, prev *trackedSet) (*trackedSet, error) {
	empty := &trackedSet{files: map[string]trackedFile{}, dirs: map[string]bool{}}
	if prev != nil && len(prev.files) == 0 && prev.sig == empty.sig {
		empty = prev // unchanged: no index before either
	}
	if repo == nil {
		return empty, nil
	}
	p := filepath.Join(repo.GitDir, "index")
	// Opened without following a symlink and without blocking: a command
	// may have put a link or a FIFO there (a FIFO hung every snapshot).
	f, err := safefs.New(repo.GitDir).Open("index")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return empty, nil
		}
		return nil, fmt.Errorf("read index %s: %w (a command may have replaced it; git would refuse it too)", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat index: %w", err)
	}
	sig := sigOf(fi)
	if prev != nil && prev.sig == sig {
		return prev, nil
	}
	// Sized from the stat: io.ReadAll's doublings allocated twice the
	// index (4.8 MB for 25,000 entries).
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	data := buf.Bytes()
	// Sized from the header's entry count: growing the map one doubling
	// at a time allocated twice what it keeps (5.9 MB for 25,000 entries).
	ts := &trackedSet{files: make(map[string]trackedFile, indexEntryCount(data)), dirs: map[string]bool{}, sig: sig, mtime: sig.mtime}
	add := func(name string, tf trackedFile) { ts.add(repo.Prefix, name, tf) }
	if err := parseIndexFast(data, add); err == nil {
		return ts, nil
	}
	ts.files, ts.dirs = map[string]trackedFile{}, map[string]bool{}
	var idx index.Index
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil {
		return nil, fmt.Errorf("read index %s: %w", p, err)
	}
	for _, e := range idx.Entries {
		ts.add(repo.Prefix, e.Name, trackedFile{
			mode: uint32(e.Mode),
			hash: e.Hash,
			st: statInfo{
				size:  int64(e.Size),
				mtime: unixNano(e.ModifiedAt),
				ctime: unixNano(e.CreatedAt),
				ino:   e.Inode,
			},
			// Stage 0 is a normal entry (go-git's index.Merged constant is 1).
			seedOK: e.Stage == 0 && !e.IntentToAdd && !e.SkipWorktree,
		})
	}
	return ts, nil
}

func (ts *trackedSet) add(prefix, fullName string, tf trackedFile) {
	name, ok := strings.CutPrefix(fullName, prefix)
	if !ok || name == "" {
		return
	}
	if old, dup := ts.files[name]; dup && old.seedOK {
		return // keep stage 0 over conflict stages
	}
	ts.files[name] = tf
	for d := name; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			break
		}
		d = d[:i]
		if ts.dirs[d] {
			break
		}
		ts.dirs[d] = true
	}
}

// seedable reports whether the entry's index hash may stand for the file on
// disk when the stat matches: git's racy rule (mtime or ctime not before
// the index file's mtime) and only blob modes.
func (tf trackedFile) seedable(indexMtime int64) bool {
	if !tf.seedOK || tf.st.mtime >= indexMtime || tf.st.ctime >= indexMtime {
		return false
	}
	switch filemode.FileMode(tf.mode) {
	case filemode.Regular, filemode.Executable, filemode.Symlink:
		return true
	}
	return false
}

// unixNano is t in ns since the epoch, 0 for go-git's zero time (an index
// entry with no timestamps).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
