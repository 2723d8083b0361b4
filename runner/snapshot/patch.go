package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/utils/diff"

	"github.com/seed43ef5acb/runner/runner/event"
)

// Limits of text diffs: larger files, and files with a NUL byte in their
// first binarySniff bytes (git's rule), are diffed as binary.
const (
	maxTextDiff = 8 << 20
	binarySniff = 8000
	diffTimeout = 5 * time.Second
)

// Patch writes the diff from one tree to another to w in git's extended
// unified format, one file section at a time, and returns the changed
// files. The output applies with `git apply` (and `git apply -R`): binary
// files are GIT binary patch literals, type changes are a deletion then an
// addition, paths are C-quoted where git quotes them, and exact renames
// are detected. An empty from or to means the empty tree.
func (s *Store) Patch(ctx context.Context, from, to Tree, w io.Writer) ([]FileChange, error) {
	return s.diff(ctx, from, to, w)
}

// Diff returns the changed files between two trees, with line counts,
// without writing a patch.
func (s *Store) Diff(ctx context.Context, from, to Tree) ([]FileChange, error) {
	return s.diff(ctx, from, to, nil)
}

func (s *Store) diff(ctx context.Context, from, to Tree, w io.Writer) ([]FileChange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	changes, err := s.diffTrees(ctx, from, to)
	if err != nil {
		return nil, err
	}
	var bw *bufio.Writer
	if w != nil {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	out := make([]FileChange, 0, len(changes))
	for i := range changes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fc, err := s.fileSection(&changes[i], bw)
		if err != nil {
			return nil, err
		}
		out = append(out, fc)
	}
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return nil, fmt.Errorf("write patch: %w", err)
		}
	}
	return out, nil
}

// blobContent reads one side of a change; gitlinks read as git shows them.
func (s *Store) blobContent(e treeEntry) ([]byte, error) {
	switch {
	case e.mode == 0:
		return nil, nil
	case e.mode == modeGitlink:
		return []byte("Subproject commit " + e.hash.String() + "\n"), nil
	}
	return s.objects.read(plumbing.BlobObject, e.hash)
}

func isBinary(b []byte) bool {
	if len(b) > maxTextDiff {
		return true
	}
	return bytes.IndexByte(b[:min(len(b), binarySniff)], 0) >= 0
}

// fileSection writes one file's section (when bw is not nil) and returns
// its FileChange.
func (s *Store) fileSection(c *change, bw *bufio.Writer) (FileChange, error) {
	fc := FileChange{Path: c.newPath, OldMode: c.from.mode, NewMode: c.to.mode}
	switch {
	case c.from.mode == 0:
		fc.Status = event.ChangeAdded
	case c.to.mode == 0:
		fc.Status, fc.Path = event.ChangeDeleted, c.oldPath
	case c.oldPath != c.newPath:
		fc.Status, fc.OldPath = event.ChangeRenamed, c.oldPath
	default:
		fc.Status = event.ChangeModified
	}
	contentChanged := c.from.hash != c.to.hash
	var old, cur []byte
	if contentChanged {
		var err error
		if old, err = s.blobContent(c.from); err != nil {
			return fc, err
		}
		if cur, err = s.blobContent(c.to); err != nil {
			return fc, err
		}
		fc.Binary = isBinary(old) || isBinary(cur)
	}
	var hunks []byte
	if contentChanged && !fc.Binary {
		ops := lineOps(old, cur)
		fc.Additions, fc.Deletions = countOps(ops)
		if bw != nil {
			hunks = renderHunks(ops, 3)
		}
	}
	if bw == nil {
		return fc, nil
	}
	writeHeader(bw, c, contentChanged)
	switch {
	case !contentChanged:
	case fc.Binary:
		if err := writeBinary(bw, old, cur); err != nil {
			return fc, err
		}
	case len(hunks) > 0:
		fmt.Fprintf(bw, "--- %s\n+++ %s\n", sidePath("a/", c.oldPath, c.from.mode), sidePath("b/", c.newPath, c.to.mode))
		bw.Write(hunks)
	}
	return fc, nil
}

func sidePath(prefix, p string, mode uint32) string {
	if mode == 0 {
		return "/dev/null"
	}
	return quotePath(prefix + p)
}

// writeHeader writes the "diff --git" line and the extended headers.
func writeHeader(bw *bufio.Writer, c *change, contentChanged bool) {
	fmt.Fprintf(bw, "diff --git %s %s\n", quotePath("a/"+c.oldPath), quotePath("b/"+c.newPath))
	switch {
	case c.from.mode == 0:
		fmt.Fprintf(bw, "new file mode %06o\n", c.to.mode)
	case c.to.mode == 0:
		fmt.Fprintf(bw, "deleted file mode %06o\n", c.from.mode)
	case c.from.mode != c.to.mode:
		fmt.Fprintf(bw, "old mode %06o\nnew mode %06o\n", c.from.mode, c.to.mode)
	}
	if c.from.mode != 0 && c.to.mode != 0 && c.oldPath != c.newPath {
		sim := 100
		if contentChanged {
			sim = 0
		}
		fmt.Fprintf(bw, "similarity index %d%%\nrename from %s\nrename to %s\n", sim, quotePath(c.oldPath), quotePath(c.newPath))
	}
	if !contentChanged {
		return
	}
	fmt.Fprintf(bw, "index %s..%s", sideHash(c.from), sideHash(c.to))
	if c.from.mode == c.to.mode {
		fmt.Fprintf(bw, " %06o", c.to.mode)
	}
	bw.WriteByte('\n')
}

func sideHash(e treeEntry) string {
	if e.mode == 0 {
		return plumbing.ZeroHash.String()
	}
	return e.hash.String()
}

// lineOp is one line of a line diff: ' ' kept, '-' removed, '+' added.
// text keeps its newline; only a file's last line may lack one.
type lineOp struct {
	kind byte
	text string
}

// lineOps diffs two texts by lines with go-git's Myers wrapper (go-diff in
// line mode). Empty chunks it may return are dropped, and adjacent chunks
// of one kind merge naturally, since ops are per line.
func lineOps(a, b []byte) []lineOp {
	var ops []lineOp
	for _, d := range diff.DoWithTimeout(string(a), string(b), diffTimeout) {
		k := byte(' ')
		switch d.Type {
		case -1:
			k = '-'
		case 1:
			k = '+'
		}
		for t := d.Text; t != ""; {
			i := strings.IndexByte(t, '\n')
			line := t
			if i >= 0 {
				line = t[:i+1]
			}
			ops = append(ops, lineOp{kind: k, text: line})
			t = t[len(line):]
		}
	}
	return ops
}

func countOps(ops []lineOp) (add, del int) {
	for _, o := range ops {
		switch o.kind {
		case '+':
			add++
		case '-':
			del++
		}
	}
	return add, del
}
