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

// DefaultMaxBinaryPatch is the largest side, in bytes, of a binary change
// that a patch carries (Options.MaxBinaryPatch): both sides of such a
// change are read into memory to choose between a delta and a literal.
// A larger change is left out of the patch and recorded instead, so that
// a patch and the memory that writes it stay bounded whatever the files'
// sizes (a 4-byte append to a 200 MB file would otherwise be two 250 MB
// literals).
const DefaultMaxBinaryPatch = 16 << 20

// Patch writes the diff from one tree to another to w in git's extended
// unified format, one file section at a time, and returns the changed
// files. The output applies with `git apply` (and `git apply -R`): binary
// files are GIT binary patches (a delta or a literal, whichever is
// smaller, as git writes them), type changes are a deletion then an
// addition, paths are C-quoted where git quotes them, and exact renames
// are detected. An empty from or to means the empty tree.
//
// A binary change with a side larger than the store's MaxBinaryPatch is
// not in the patch: its FileChange has Omitted set (blob ids and sizes),
// and the patch starts with lines "runner: …" naming it, which git apply
// skips. Memory stays bounded: only changes within the limits are read.
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
	sized := make([]sizedChange, len(changes))
	for i := range changes {
		if sized[i], err = s.sizeChange(&changes[i]); err != nil {
			return nil, err
		}
	}
	var bw *bufio.Writer
	if w != nil {
		bw = bufio.NewWriterSize(w, 64<<10)
		writeOmittedNote(bw, sized, s.maxBin)
	}
	out := make([]FileChange, 0, len(changes))
	for i := range sized {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fc, err := s.fileSection(&sized[i], bw)
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

// sizedChange is a change with the sizes (bytes) of its two sides, and
// whether it is too large for the patch.
type sizedChange struct {
	*change
	oldSize, newSize int64
	omitted          *event.Omitted
}

// sizeChange looks up the sizes of a content change's sides without
// reading large blobs, and marks it omitted when a binary side is larger
// than the store's limit. Every side larger than maxTextDiff is binary.
func (s *Store) sizeChange(c *change) (sizedChange, error) {
	sc := sizedChange{change: c}
	if c.from.hash == c.to.hash {
		return sc, nil
	}
	var err error
	if sc.oldSize, err = s.blobSize(c.from); err != nil {
		return sc, err
	}
	if sc.newSize, err = s.blobSize(c.to); err != nil {
		return sc, err
	}
	_, oldUnhashed := unhashedSize(c.from.hash)
	_, newUnhashed := unhashedSize(c.to.hash)
	if c.to.mode == 0 && sc.oldSize > s.maxBin && !oldUnhashed {
		return sc, nil // a deletion needs no content (fileSection writes it without reading)
	}
	if max(sc.oldSize, sc.newSize) > s.maxBin {
		sc.omitted = &event.Omitted{
			Reason:  fmt.Sprintf("binary change larger than the %s binary patch limit", SizeText(s.maxBin)),
			OldSize: sc.oldSize, NewSize: sc.newSize,
		}
		if oldUnhashed || newUnhashed {
			sc.omitted.Reason += fmt.Sprintf("; a file over %s is not read (its content is not hashed)", SizeText(UnhashedLimit))
		}
		if c.from.mode != 0 && !oldUnhashed {
			sc.omitted.OldBlob = c.from.hash.String()
		}
		if c.to.mode != 0 && !newUnhashed {
			sc.omitted.NewBlob = c.to.hash.String()
		}
	}
	return sc, nil
}

// blobSize is the size of one side of a change (0 for a missing side).
func (s *Store) blobSize(e treeEntry) (int64, error) {
	switch {
	case e.mode == 0:
		return 0, nil
	case e.mode == modeGitlink:
		return int64(len("Subproject commit \n") + 40), nil
	}
	return s.objects.size(plumbing.BlobObject, e.hash)
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
// its FileChange. An omitted change has no section (writeOmittedNote
// names it at the top) and its blobs are never read.
func (s *Store) fileSection(sc *sizedChange, bw *bufio.Writer) (FileChange, error) {
	c := sc.change
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
	if sc.omitted != nil {
		fc.Binary, fc.Omitted = true, sc.omitted
		return fc, nil
	}
	contentChanged := c.from.hash != c.to.hash
	if contentChanged && c.to.mode == 0 && sc.oldSize > s.maxBin {
		fc.Binary = true
		if bw != nil {
			writeHeader(bw, c, true)
			writeBigDeletion(bw)
		}
		return fc, nil
	}
	if contentChanged && max(sc.oldSize, sc.newSize) > streamLimit { // binary: never read whole
		fc.Binary = true
		if bw != nil {
			writeHeader(bw, c, true)
			return fc, writeBinaryStream(bw, s.side(c.from, sc.oldSize), s.side(c.to, sc.newSize))
		}
		return fc, nil
	}
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

// writeOmittedNote writes, before the first file section, one line per
// change the patch leaves out. The lines start with "runner: ", which
// git apply and patch(1) skip as text before the first "diff --git".
func writeOmittedNote(bw *bufio.Writer, sized []sizedChange, limit int64) {
	n := 0
	for i := range sized {
		if sized[i].omitted != nil {
			n++
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(bw, "runner: this patch does NOT carry %d binary change(s) larger than the %s binary patch limit (%d bytes):\n",
		n, SizeText(limit), limit)
	for i := range sized {
		o := sized[i].omitted
		if o == nil {
			continue
		}
		fmt.Fprintf(bw, "runner:   %s: old %s (%d bytes), new %s (%d bytes)\n", sized[i].newPath,
			blobText(o.OldBlob, o.OldSize), o.OldSize, blobText(o.NewBlob, o.NewSize), o.NewSize)
	}
	bw.WriteString("runner: the files as the run left them are in its work tree; this patch applies without them.\n\n")
}

// blobText names one side of an omitted change: its blob, "none" when
// the side is missing, "not read" for a file over UnhashedLimit.
func blobText(h string, size int64) string {
	switch {
	case h == "" && size > 0:
		return "not read"
	case h == "":
		return "none"
	}
	return "blob " + h
}

// SizeText is a size in bytes as "16 MiB", "512 KiB" or "100 bytes" (the
// binary patch limit in messages, here and in the pipeline).
func SizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
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
