package gitignore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestReadRegularBounded: a file of MaxFile bytes is read; a sparse file
// one byte larger, or of 1 TiB, is refused with ErrTooLarge, unread.
func TestReadRegularBounded(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		size int64
		ok   bool
	}{{MaxFile, true}, {MaxFile + 1, false}, {1 << 40, false}} {
		p := filepath.Join(dir, "HEAD")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, c.size); err != nil {
			t.Skipf("a sparse file of %d bytes: %v", c.size, err)
		}
		b, err := ReadRegular(p)
		switch {
		case c.ok && (err != nil || int64(len(b)) != c.size):
			t.Errorf("%d bytes: read %d, %v; want all of it", c.size, len(b), err)
		case !c.ok && (!errors.Is(err, ErrTooLarge) || b != nil):
			t.Errorf("%d bytes: read %d, %v; want ErrTooLarge", c.size, len(b), err)
		}
	}
}
