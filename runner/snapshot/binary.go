package snapshot

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"fmt"
)

// base85 is git's base85 alphabet (base85.c).
const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// writeBinary writes a "GIT binary patch" with the new content as a
// literal, then the old one as the reverse literal, as `git diff --binary`
// does, so the patch applies forwards and with -R.
func writeBinary(bw *bufio.Writer, old, cur []byte) error {
	bw.WriteString("GIT binary patch\n")
	if err := writeLiteral(bw, cur); err != nil {
		return err
	}
	return writeLiteral(bw, old)
}

func writeLiteral(bw *bufio.Writer, data []byte) error {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return fmt.Errorf("compress binary: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress binary: %w", err)
	}
	fmt.Fprintf(bw, "literal %d\n", len(data))
	zb := z.Bytes()
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
	return nil
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
