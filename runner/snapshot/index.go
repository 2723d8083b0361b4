package snapshot

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
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
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ctime = st.Ctim.Nano()
		s.ino = st.Ino
	}
	return s
}

// loadTracked reads the user's index read-only. It returns prev when the
// index file has not changed since prev was read, and an empty set when
// there is no repository or no index.
func loadTracked(repo *userRepo, prev *trackedSet) (*trackedSet, error) {
	empty := &trackedSet{files: map[string]trackedFile{}, dirs: map[string]bool{}}
	if repo == nil {
		return empty, nil
	}
	p := filepath.Join(repo.gitDir, "index")
	fi, err := os.Stat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return empty, nil
		}
		return nil, fmt.Errorf("stat index: %w", err)
	}
	sig := sigOf(fi)
	if prev != nil && prev.sig == sig {
		return prev, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	defer f.Close()
	var idx index.Index
	if err := index.NewDecoder(bufio.NewReaderSize(f, 1<<16)).Decode(&idx); err != nil {
		return nil, fmt.Errorf("read index %s: %w", p, err)
	}
	ts := &trackedSet{
		files: make(map[string]trackedFile, len(idx.Entries)),
		dirs:  map[string]bool{},
		sig:   sig,
		mtime: sig.mtime,
	}
	for _, e := range idx.Entries {
		ts.add(repo.prefix, e)
	}
	return ts, nil
}

func (ts *trackedSet) add(prefix string, e *index.Entry) {
	name, ok := strings.CutPrefix(e.Name, prefix)
	if !ok || name == "" {
		return
	}
	tf := trackedFile{
		mode: uint32(e.Mode),
		hash: e.Hash,
		st: statInfo{
			size:  int64(e.Size),
			mtime: e.ModifiedAt.UnixNano(),
			ctime: e.CreatedAt.UnixNano(),
			ino:   e.Inode,
		},
		// Stage 0 is a normal entry (go-git's index.Merged constant is 1).
		seedOK: e.Stage == 0 && !e.IntentToAdd && !e.SkipWorktree,
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
