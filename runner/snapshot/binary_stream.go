package snapshot

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// A binary change with a side larger than streamLimit is never read whole:
// writeBinaryStream reads each side a few times, in blocks. Below it, the
// sides are read into memory and diffed with go-git's delta (writeBinary).
const streamLimit = maxTextDiff

// deflateMaxRatio bounds how far deflate can shrink data (a stream of
// 258-byte matches: about 1032 to 1), so a literal of n bytes compresses
// to at least n/deflateMaxRatio bytes.
const deflateMaxRatio = 1033

// maxCopy is the largest copy a pack delta's copy op carries (3 size bytes).
const maxCopy = 1<<24 - 1

// blobSide is one side of a change to stream: its size and how to open it.
type blobSide struct {
	size int64
	open func() (io.ReadCloser, error)
}

// side is the streamable form of one side of a change.
func (s *Store) side(e treeEntry, size int64) blobSide {
	return blobSide{size: size, open: func() (io.ReadCloser, error) {
		switch {
		case e.mode == 0:
			return io.NopCloser(strings.NewReader("")), nil
		case e.mode == modeGitlink:
			return io.NopCloser(strings.NewReader("Subproject commit " + e.hash.String() + "\n")), nil
		}
		return s.objects.open(plumbing.BlobObject, e.hash)
	}}
}

// open returns a reader of an object's content; a large one streams from
// its file (go-git reads objects over inMemoryLimit lazily).
func (s *objectStore) open(typ plumbing.ObjectType, h plumbing.Hash) (io.ReadCloser, error) {
	if data, ok := s.recent.get(h, typ); ok {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	if data, ok, err := s.readHeld(h, typ); ok || err != nil {
		return io.NopCloser(bytes.NewReader(data)), err
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	o, err := s.lookup(typ, h)
	if err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", typ, h, err)
	}
	return r, nil
}

// writeBinaryStream writes the "GIT binary patch" of old → cur as
// writeBinary does, in memory bounded by a few blocks whatever the sizes.
// Each hunk is a delta made of the sides' common prefix and suffix (all
// of an append, say) and the bytes between, or the literal when that
// compresses smaller; git apply takes either.
func writeBinaryStream(bw *bufio.Writer, old, cur blobSide) error {
	p, x, err := commonEnds(old, cur)
	if err != nil {
		return err
	}
	bw.WriteString("GIT binary patch\n")
	if err := streamHunk(bw, old, cur, p, x); err != nil {
		return err
	}
	return streamHunk(bw, cur, old, p, x)
}

// streamHunk writes the hunk that turns src into dst, given their common
// prefix p and suffix x.
func streamHunk(bw *bufio.Writer, src, dst blobSide, p, x int64) error {
	literal := func(w io.Writer) error {
		r, err := dst.open()
		if err != nil {
			return err
		}
		defer r.Close()
		n, err := io.Copy(w, r)
		if err == nil && n != dst.size {
			err = fmt.Errorf("read %d bytes of a %d-byte blob", n, dst.size)
		}
		return err
	}
	write, kind, size := literal, "literal", dst.size
	if src.size > 0 && dst.size > 0 {
		delta := func(w io.Writer) error { return writeDelta(w, src.size, dst, p, x) }
		dn, dz, err := deflatedSize(delta)
		if err != nil {
			return err
		}
		use := dz*deflateMaxRatio < dst.size // no literal compresses below dz
		if !use {
			_, lz, err := deflatedSize(literal)
			if err != nil {
				return err
			}
			use = dz < lz
		}
		if use {
			write, kind, size = delta, "delta", dn
		}
	}
	fmt.Fprintf(bw, "%s %d\n", kind, size)
	lw := &base85Writer{bw: bw}
	zw, _ := zlib.NewWriterLevel(lw, zlib.BestCompression)
	if err := write(zw); err != nil {
		return fmt.Errorf("binary patch: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("binary patch: %w", err)
	}
	lw.close()
	return nil
}

// deflatedSize is the size of what write writes, raw and compressed.
func deflatedSize(write func(io.Writer) error) (raw, z int64, err error) {
	var zc counter
	zw, _ := zlib.NewWriterLevel(&zc, zlib.BestCompression)
	rc := &counter{w: zw}
	if err := write(rc); err != nil {
		return 0, 0, fmt.Errorf("binary patch: %w", err)
	}
	if err := zw.Close(); err != nil {
		return 0, 0, fmt.Errorf("binary patch: %w", err)
	}
	return rc.n, zc.n, nil
}

// counter counts the bytes written through it (to w, when not nil).
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	if c.w == nil {
		return len(b), nil
	}
	return c.w.Write(b)
}

// writeDelta writes a pack delta (git's patch_delta format) from a source
// of srcSize bytes to dst: copy the prefix p, insert dst's middle, copy
// the suffix x.
func writeDelta(w io.Writer, srcSize int64, dst blobSide, p, x int64) error {
	var hdr []byte
	hdr = appendDeltaSize(hdr, srcSize)
	hdr = appendDeltaSize(hdr, dst.size)
	hdr = appendCopies(hdr, 0, p)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	if mid := dst.size - p - x; mid > 0 {
		r, err := dst.open()
		if err != nil {
			return err
		}
		defer r.Close()
		if _, err := io.CopyN(io.Discard, r, p); err != nil {
			return err
		}
		br := bufio.NewReaderSize(io.LimitReader(r, mid), 64<<10)
		var op [128]byte
		for left := mid; left > 0; {
			n := int(min(left, 127))
			op[0] = byte(n)
			if _, err := io.ReadFull(br, op[1:n+1]); err != nil {
				return err
			}
			if _, err := w.Write(op[:n+1]); err != nil {
				return err
			}
			left -= int64(n)
		}
	}
	_, err := w.Write(appendCopies(nil, srcSize-x, x))
	return err
}

// appendDeltaSize appends a delta header size: 7 bits a byte, low first.
func appendDeltaSize(b []byte, n int64) []byte {
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}

// appendCopies appends copy ops for n source bytes from off.
func appendCopies(b []byte, off, n int64) []byte {
	for n > 0 {
		size := min(n, maxCopy)
		op, at := byte(0x80), len(b)
		b = append(b, 0)
		for i := range 4 {
			if v := byte(off >> (8 * i)); v != 0 {
				op |= 1 << i
				b = append(b, v)
			}
		}
		for i := range 3 {
			if v := byte(size >> (8 * i)); v != 0 {
				op |= 0x10 << i
				b = append(b, v)
			}
		}
		b[at] = op
		off, n = off+size, n-size
	}
	return b
}

// commonEnds are the lengths of the common prefix and suffix of a and b
// (not overlapping: p+x is at most the shorter size), read in blocks.
func commonEnds(a, b blobSide) (p, x int64, err error) {
	ra, rb, err := openBoth(a, b)
	if err != nil {
		return 0, 0, err
	}
	p, err = firstDiff(ra, rb, min(a.size, b.size), true)
	ra.Close()
	rb.Close()
	if err != nil {
		return 0, 0, err
	}
	limit := min(a.size, b.size) - p
	if limit == 0 {
		return p, 0, nil
	}
	if ra, rb, err = openBoth(a, b); err != nil {
		return 0, 0, err
	}
	defer ra.Close()
	defer rb.Close()
	if _, err := io.CopyN(io.Discard, ra, a.size-limit); err != nil {
		return 0, 0, err
	}
	if _, err := io.CopyN(io.Discard, rb, b.size-limit); err != nil {
		return 0, 0, err
	}
	last, err := firstDiff(ra, rb, limit, false) // one past the last differing byte
	return p, limit - last, err
}

// openBoth opens both sides.
func openBoth(a, b blobSide) (io.ReadCloser, io.ReadCloser, error) {
	ra, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	rb, err := b.open()
	if err != nil {
		ra.Close()
		return nil, nil, err
	}
	return ra, rb, nil
}

// firstDiff compares n bytes of ra and rb: with first, the offset of the
// first difference (n when none); else one past the last difference (0
// when none).
func firstDiff(ra, rb io.Reader, n int64, first bool) (int64, error) {
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	var off, last int64
	for off < n {
		m := int(min(n-off, int64(len(ba))))
		if _, err := io.ReadFull(ra, ba[:m]); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(rb, bb[:m]); err != nil {
			return 0, err
		}
		if !bytes.Equal(ba[:m], bb[:m]) {
			for i := range m {
				if ba[i] != bb[i] {
					if first {
						return off + int64(i), nil
					}
					last = off + int64(i) + 1
				}
			}
		}
		off += int64(m)
	}
	if first {
		return n, nil
	}
	return last, nil
}

// base85Writer writes compressed bytes as git's binary hunk lines
// (writeBase85Lines), 52 bytes a line; close ends the hunk.
type base85Writer struct {
	bw  *bufio.Writer
	buf [52]byte
	n   int
}

func (w *base85Writer) Write(b []byte) (int, error) {
	total := len(b)
	for len(b) > 0 {
		c := copy(w.buf[w.n:], b)
		w.n += c
		b = b[c:]
		if w.n == len(w.buf) {
			w.line()
		}
	}
	return total, nil // bw's errors stay with it, for the patch's Flush
}

// line writes the buffered bytes as one line.
func (w *base85Writer) line() {
	if w.n <= 26 {
		w.bw.WriteByte(byte('A' + w.n - 1))
	} else {
		w.bw.WriteByte(byte('a' + w.n - 27))
	}
	encode85(w.bw, w.buf[:w.n])
	w.bw.WriteByte('\n')
	w.n = 0
}

// close writes the last partial line and the hunk's empty line.
func (w *base85Writer) close() {
	if w.n > 0 {
		w.line()
	}
	w.bw.WriteByte('\n')
}
