package mcp

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// stderrTail is how much of a server's stderr is kept for error messages.
const stderrTail = 2048

// maxStderrLine is the longest stderr line buffered before it is written
// (a server that never writes a newline still gets its output written).
const maxStderrLine = 64 << 10

// stderrLog takes a stdio server's stderr: whole lines, redacted, go to
// file (when there is one), and the last stderrTail bytes are kept for
// error messages. Safe for concurrent use.
type stderrLog struct {
	mu     sync.Mutex
	file   io.WriteCloser // nil: none
	redact func(string) string
	line   []byte // a partial line
	tail   []byte
}

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line = append(l.line, p...)
	for {
		i := bytes.IndexByte(l.line, '\n')
		if i < 0 && len(l.line) < maxStderrLine {
			break
		}
		if i < 0 {
			i = len(l.line) - 1
		}
		l.emit(string(l.line[:i+1]))
		l.line = l.line[i+1:]
	}
	return len(p), nil
}

// emit writes one redacted line and keeps it in the tail.
func (l *stderrLog) emit(s string) {
	s = l.redact(s)
	if l.file != nil {
		_, _ = io.WriteString(l.file, s)
	}
	l.tail = append(l.tail, s...)
	if len(l.tail) > 2*stderrTail {
		l.tail = append(l.tail[:0:0], l.tail[len(l.tail)-stderrTail:]...)
	}
}

// Tail is the end of what the server wrote, the partial line included,
// trimmed; "" when it wrote nothing.
func (l *stderrLog) Tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := string(l.tail) + l.redact(string(l.line))
	if len(t) > stderrTail {
		t = "…" + t[len(t)-stderrTail:]
	}
	return strings.ToValidUTF8(strings.TrimSpace(t), "\uFFFD")
}

// Close flushes the partial line and closes the file.
func (l *stderrLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.line) > 0 {
		s := l.redact(string(l.line))
		if l.file != nil {
			_, _ = io.WriteString(l.file, s)
		}
		l.tail = append(l.tail, s...)
		l.line = nil
	}
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}
