package mcp

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// stderrTail is how much of a server's stderr is kept for error messages.
const stderrTail = 2048

// maxStderrLine is the longest stderr line buffered before it is written
// (a server that never writes a newline still gets its output written).
const maxStderrLine = 64 << 10

// maxStderrFile bounds a server's stderr file: the runner writes it
// outside the sandbox, so a server that writes without end would fill the
// runner's disk for as long as the run lasts.
const maxStderrFile = 16 << 20

// stderrLog takes a stdio server's stderr: whole lines, redacted, go to
// file (when there is one) up to max bytes (0: maxStderrFile), then a
// line that says how much more was left out; the last stderrTail bytes are
// kept for error messages. Safe for concurrent use.
type stderrLog struct {
	mu      sync.Mutex
	file    io.WriteCloser // nil: none
	redact  func(string) string
	line    []byte // a partial line
	tail    []byte
	max     int64
	written int64 // bytes written to file
	dropped int64 // bytes left out of file
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
	l.toFile(s)
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
		l.toFile(s)
		l.tail = append(l.tail, s...)
		l.line = nil
	}
	if l.file == nil {
		return nil
	}
	if l.dropped > 0 {
		_, _ = fmt.Fprintf(l.file, "\n[runner: %d more bytes of this server's stderr were not kept: the file's bound is %d bytes]\n", l.dropped, l.bound())
	}
	err := l.file.Close()
	l.file = nil
	return err
}

// toFile writes s to the file while it is under its bound. The caller
// holds mu.
func (l *stderrLog) toFile(s string) {
	if l.file == nil {
		return
	}
	if l.written+int64(len(s)) > l.bound() {
		l.dropped += int64(len(s))
		return
	}
	n, _ := io.WriteString(l.file, s)
	l.written += int64(n)
}

func (l *stderrLog) bound() int64 {
	if l.max > 0 {
		return l.max
	}
	return maxStderrFile
}
