package snapshot

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// FileChange is one file of a diff between two trees. A change of type
// (symlink, regular file, gitlink) is two changes, deleted then added, as
// git apply requires.
type FileChange struct {
	Path    string             // new path; the old path for deletions
	OldPath string             // set for renames only
	Status  event.ChangeStatus // event.ChangeAdded, ChangeModified, ChangeDeleted or ChangeRenamed
	// OldMode and NewMode are git modes (0o100644, 0o100755, 0o120000,
	// 0o160000); 0 on the side where the file does not exist.
	OldMode, NewMode uint32
	Binary           bool // content is binary or too large for a text diff
	// Additions and Deletions count added and removed lines (0 for binary).
	Additions, Deletions int
	// Omitted is set when the patch leaves the change out: a binary side
	// is larger than the store's MaxBinaryPatch (Binary is then true).
	Omitted *event.Omitted
}

// change is one path pair found by the tree diff; a zero mode marks the
// missing side.
type change struct {
	oldPath, newPath string
	from, to         treeEntry
}

func parseTree(t Tree) (plumbing.Hash, error) {
	if t == "" || t == EmptyTree {
		return plumbing.ZeroHash, nil
	}
	if !isHex40(string(t)) {
		return plumbing.ZeroHash, fmt.Errorf("%q: %w", t, ErrBadTree)
	}
	return plumbing.NewHash(string(t)), nil
}

// diffTrees lists the changed blobs and gitlinks between two trees, in git
// tree order, with exact renames paired.
func (s *Store) diffTrees(ctx context.Context, from, to Tree) ([]change, error) {
	a, err := parseTree(from)
	if err != nil {
		return nil, err
	}
	b, err := parseTree(to)
	if err != nil {
		return nil, err
	}
	var out []change
	if err := s.diffTree(ctx, a, b, "", &out); err != nil {
		return nil, err
	}
	return pairRenames(out), nil
}

func (s *Store) readTree(h plumbing.Hash) ([]treeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	data, err := s.objects.read(plumbing.TreeObject, h)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadTree, err)
	}
	return decodeTree(data)
}

// diffTree merges two sorted trees by git order key (a directory and a
// file of the same name are different keys, so type changes come out as
// a deletion and an addition).
func (s *Store) diffTree(ctx context.Context, a, b plumbing.Hash, dir string, out *[]change) error {
	if a == b {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ea, err := s.readTree(a)
	if err != nil {
		return err
	}
	eb, err := s.readTree(b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var x, y *treeEntry
		switch {
		case j >= len(eb) || (i < len(ea) && treeLess(&ea[i], &eb[j])):
			x = &ea[i]
			i++
		case i >= len(ea) || treeLess(&eb[j], &ea[i]):
			y = &eb[j]
			j++
		default:
			x, y = &ea[i], &eb[j]
			i, j = i+1, j+1
		}
		if err := s.diffPair(ctx, x, y, dir, out); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) diffPair(ctx context.Context, x, y *treeEntry, dir string, out *[]change) error {
	var name string
	var sub [2]plumbing.Hash
	isDir := false
	if x != nil {
		name = x.name
		if x.mode == modeDir {
			sub[0], isDir = x.hash, true
		}
	}
	if y != nil {
		name = y.name
		if y.mode == modeDir {
			sub[1], isDir = y.hash, true
		}
	}
	p := joinRel(dir, name)
	if isDir {
		return s.diffTree(ctx, sub[0], sub[1], p, out)
	}
	c := change{oldPath: p, newPath: p}
	if x != nil {
		c.from = *x
	}
	if y != nil {
		c.to = *y
	}
	if x != nil && y != nil && x.hash == y.hash && x.mode == y.mode {
		return nil
	}
	if x != nil && y != nil && kind(x.mode) != kind(y.mode) {
		*out = append(*out, change{oldPath: p, newPath: p, from: *x}, change{oldPath: p, newPath: p, to: *y})
		return nil
	}
	*out = append(*out, c)
	return nil
}

func treeLess(a, b *treeEntry) bool {
	return gitLess(&entry{name: a.name, mode: a.mode}, &entry{name: b.name, mode: b.mode})
}

// kind groups modes whose changes git shows as a content change: regular
// and executable files are one kind, symlinks and gitlinks others.
func kind(mode uint32) uint32 {
	if mode == modeExec {
		return modeFile
	}
	return mode
}

// emptyBlob is the id of the empty blob, never paired as a rename.
const emptyBlob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

// pairRenames turns a deletion and an addition of the same non-empty blob
// of the same kind into a rename, preferring a deletion with the same
// base name. The rename takes the addition's place.
func pairRenames(cs []change) []change {
	deleted := map[plumbing.Hash][]int{}
	for i, c := range cs {
		if c.to.mode == 0 && c.from.hash.String() != emptyBlob && c.from.mode != modeGitlink {
			deleted[c.from.hash] = append(deleted[c.from.hash], i)
		}
	}
	if len(deleted) == 0 {
		return cs
	}
	used := map[int]bool{}
	for i := range cs {
		c := &cs[i]
		if c.from.mode != 0 || c.to.mode == modeGitlink {
			continue
		}
		if k := bestSource(cs, deleted[c.to.hash], used, c); k >= 0 {
			used[k] = true
			c.from, c.oldPath = cs[k].from, cs[k].oldPath
		}
	}
	out := cs[:0]
	for i, c := range cs {
		if !used[i] {
			out = append(out, c)
		}
	}
	return out
}

func bestSource(cs []change, cands []int, used map[int]bool, add *change) int {
	best := -1
	for _, k := range cands {
		if used[k] || kind(cs[k].from.mode) != kind(add.to.mode) {
			continue
		}
		if baseName(cs[k].oldPath) == baseName(add.newPath) {
			return k
		}
		if best < 0 {
			best = k
		}
	}
	return best
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
