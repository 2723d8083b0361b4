package snapshot

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Git modes as stored in trees.
const (
	modeDir     = uint32(filemode.Dir)
	modeFile    = uint32(filemode.Regular)
	modeExec    = uint32(filemode.Executable)
	modeSymlink = uint32(filemode.Symlink)
	modeGitlink = uint32(filemode.Submodule)
)

// statInfo is the part of lstat the cache compares. ino is truncated to
// 32 bits as in the git index. racy marks an entry recorded so close to
// its scan that a later write could keep the same stat.
type statInfo struct {
	size, mtime, ctime int64
	ino                uint32
	racy               bool
}

// sameStat reports whether a cached hash may be reused for a file whose
// current stat is cur.
func (c statInfo) sameStat(cur statInfo) bool {
	return !c.racy && c.size == cur.size && c.mtime == cur.mtime && c.ctime == cur.ctime && c.ino == cur.ino
}

// entry is one name in a directory node.
type entry struct {
	name string
	mode uint32
	hash plumbing.Hash // blob, gitlink commit, or (dirs) tree once computed
	st   statInfo      // files and symlinks only
	dir  *dirNode      // mode == modeDir
}

// dirNode is one directory of a tracked state. entries are sorted in git
// tree order. A node is never changed once published in a state, except
// by TrackPaths, which copies the nodes on the changed path first.
type dirNode struct {
	entries []entry
	tree    plumbing.Hash
	valid   bool // tree is the hash of entries
}

// gitLess orders tree entries as git does: directories compare as if
// their name ended in '/'.
func gitLess(a, b *entry) bool {
	an, bn := a.name, b.name
	n := min(len(an), len(bn))
	if c := bytes.Compare([]byte(an[:n]), []byte(bn[:n])); c != 0 {
		return c < 0
	}
	return treeChar(an, n, a.mode) < treeChar(bn, n, b.mode)
}

func treeChar(name string, i int, mode uint32) byte {
	if i < len(name) {
		return name[i]
	}
	if mode == modeDir {
		return '/'
	}
	return 0
}

func sortEntries(es []entry) {
	sort.Slice(es, func(i, j int) bool { return gitLess(&es[i], &es[j]) })
}

// find returns the index of name in d, or -1. Entries are sorted in git
// order, which differs from byte order only around '/', so the search
// tries both the file and the directory position.
func (d *dirNode) find(name string) int {
	if d == nil {
		return -1
	}
	for _, mode := range [2]uint32{modeFile, modeDir} {
		key := entry{name: name, mode: mode}
		i := sort.Search(len(d.entries), func(i int) bool { return !gitLess(&d.entries[i], &key) })
		if i < len(d.entries) && d.entries[i].name == name {
			return i
		}
	}
	return -1
}

// encodeTree returns the canonical git encoding of entries.
func encodeTree(es []entry) []byte {
	var b bytes.Buffer
	b.Grow(len(es) * 48)
	for i := range es {
		b.WriteString(strconv.FormatUint(uint64(es[i].mode), 8))
		b.WriteByte(' ')
		b.WriteString(es[i].name)
		b.WriteByte(0)
		b.Write(es[i].hash[:])
	}
	return b.Bytes()
}

// treeEntry is one decoded entry of a stored tree.
type treeEntry struct {
	name string
	mode uint32
	hash plumbing.Hash
}

// decodeTree parses a raw git tree object.
func decodeTree(data []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("tree entry without mode: %w", ErrBadTree)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree entry mode %q: %w", data[:sp], ErrBadTree)
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+21 {
			return nil, fmt.Errorf("truncated tree entry: %w", ErrBadTree)
		}
		te := treeEntry{name: string(data[:nul]), mode: uint32(mode)}
		copy(te.hash[:], data[nul+1:nul+21])
		out = append(out, te)
		data = data[nul+21:]
	}
	return out, nil
}
