package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// MaxPatchExcerpt is the most of a patch, in bytes, that a summary or a
// comment shows: a patch of any size is read this far only, so building
// the report needs bounded memory. The whole patch stays in its file.
const MaxPatchExcerpt = 256 << 10

// ReadPatchExcerpt reads the start of the patch file at path: at most
// MaxPatchExcerpt bytes, cut after the last whole line when the file is
// longer, and the file's size in bytes. Pass both to MarkdownOptions
// (Patch, PatchSize). Errors are the file system's (fs.ErrNotExist for
// a missing file).
func ReadPatchExcerpt(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	buf := make([]byte, min(fi.Size(), MaxPatchExcerpt))
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	buf = buf[:n]
	if fi.Size() > int64(n) {
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			buf = buf[:i+1]
		}
	}
	return string(buf), fi.Size(), nil
}

// byteText is a size for people: "812 bytes", "256 KiB", "540.2 MiB".
func byteText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
