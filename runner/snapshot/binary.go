package snapshot

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// base85 is git's base85 alphabet (base85.c).
const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// writeBinary writes a "GIT binary patch": the forward hunk (old → new),
// then the reverse one (new → old), as `git diff --binary` does, so the
// patch applies forwards and with -R. Each hunk is a delta against the
// other side when its compressed form is smaller than the compressed
// literal, else the literal, as git's emit_binary_diff_body chooses. The
// deltas are go-git's (packfile.DiffDelta), in the pack delta format that
// git's patch_delta applies.
func writeBinary(bw *bufio.Writer, old, cur []byte) error {
	bw.WriteString("GIT binary patch\n")
	if err := writeBinaryHunk(bw, old, cur); err != nil {
		return err
	}
	return writeBinaryHunk(bw, cur, old)
}

// writeBigDeletion writes the binary patch of a deleted file over the
// binary patch limit without reading it: the forward hunk (the empty
// literal) only. git apply deletes the file after checking its blob id
// on the index line; the reverse hunk, which would hold the whole file,
// is optional to git, so such a deletion does not apply with -R.
func writeBigDeletion(bw *bufio.Writer) {
	bw.WriteString("GIT binary patch\n")
	_ = writeBinaryHunk(bw, nil, nil)
}

// writeBinaryHunk writes the hunk that turns src into dst.
func writeBinaryHunk(bw *bufio.Writer, src, dst []byte) error {
	lit, err := deflate(dst)
	if err != nil {
		return err
	}
	if len(src) > 0 && len(dst) > 0 {
		delta := packfile.DiffDelta(src, dst)
		z, err := deflate(delta)
		if err != nil {
			return err
		}
		if len(z) < len(lit) {
			fmt.Fprintf(bw, "delta %d\n", len(delta))
			writeBase85Lines(bw, z)
			return nil
		}
	}
	fmt.Fprintf(bw, "literal %d\n", len(dst))
	writeBase85Lines(bw, lit)
	return nil
}

// deflate compresses data with zlib at the best compression, as git does.
func deflate(data []byte) ([]byte, error) {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("compress binary: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress binary: %w", err)
	}
	return z.Bytes(), nil
}

// writeBase85Lines writes zb as git's binary hunk body: lines of up to 52
// bytes, each a length character ('A'-'Z' for 1-26, 'a'-'z' for 27-52)
// and the bytes in base85, then an empty line.
func writeBase85Lines(bw *bufio.Writer, zb []byte) {
	for len(zb) > 0 {
		n := min(len(zb), 52)
		if n <= 26 {
			bw.WriteByte(byte('A' + n - 1))
		} else {
			bw.WriteByte(byte('a' + n - 27))
		}
		encode85(bw, zb[:n])
		bw.WriteByte('\n')
		zb = zb[n:]
	}
	bw.WriteByte('\n')
}

// encode85 writes data in git's base85: each 4-byte big-endian group
// (zero-padded at the end) as 5 characters, most significant first.
func encode85(bw *bufio.Writer, data []byte) {
	for len(data) > 0 {
		var acc uint32
		for i := 0; i < 4; i++ {
			acc <<= 8
			if i < len(data) {
				acc |= uint32(data[i])
			}
		}
		var out [5]byte
		for i := 4; i >= 0; i-- {
			out[i] = base85[acc%85]
			acc /= 85
		}
		bw.Write(out[:])
		data = data[min(4, len(data)):]
	}
}
