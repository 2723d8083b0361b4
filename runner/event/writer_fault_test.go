package event

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
)

// fullFile is a file that takes room bytes, then fails with ENOSPC after
// a short write, as a full disk does; it can be truncated and seeked like
// an *os.File.
type fullFile struct {
	data []byte
	pos  int64
	room int
}

func (f *fullFile) Write(p []byte) (int, error) {
	n := min(len(p), f.room-len(f.data))
	n = max(n, 0)
	f.data = append(f.data[:f.pos], p[:n]...)
	f.pos += int64(n)
	if n < len(p) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

func (f *fullFile) Truncate(size int64) error { f.data = f.data[:size]; return nil }

func (f *fullFile) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekCurrent {
		off += f.pos
	}
	f.pos = off
	return off, nil
}

// pipe is a writer that cannot be cut back, full like fullFile.
type pipe struct{ f fullFile }

func (p *pipe) Write(b []byte) (int, error) { return p.f.Write(b) }

// TestWriterFullDisk: a line that does not fit is cut back, so the log
// holds only complete lines with gapless seq, the error says ENOSPC, and
// a line that fits once there is room again follows; a writer that
// cannot be cut back is torn once and takes nothing more.
func TestWriterFullDisk(t *testing.T) {
	f := &fullFile{room: 200}
	w := NewWriter(f, "r")
	if err := w.Emit(Text{Step: 1, Text: "short"}); err != nil {
		t.Fatal(err)
	}
	good := len(f.data)
	f.room = 2*good + 20 // room for one more short line, not a long one
	err := w.Emit(Text{Step: 1, Text: string(bytes.Repeat([]byte("x"), 500))})
	if !errors.Is(err, syscall.ENOSPC) || len(f.data) != good || w.Seq() != 1 {
		t.Fatalf("full disk: %v, %d bytes (want %d), seq %d", err, len(f.data), good, w.Seq())
	}
	if err := w.Emit(Text{Step: 2, Text: "fits"}); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadLog(bytes.NewReader(f.data))
	if err != nil || len(recs) != 2 || recs[1].Seq != 2 || !bytes.HasSuffix(f.data, []byte("\n")) {
		t.Errorf("log after the full disk (%v): %q", err, f.data)
	}

	p := &pipe{fullFile{room: 100}}
	w = NewWriter(p, "r")
	if err := w.Emit(Text{Step: 1, Text: string(bytes.Repeat([]byte("y"), 200))}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("pipe: %v", err)
	}
	p.f.room = 1 << 20
	if err := w.Emit(Text{Step: 2, Text: "more"}); !errors.Is(err, ErrTorn) || len(p.f.data) != 100 {
		t.Errorf("after a torn line: %v, %d bytes", err, len(p.f.data))
	}
}
