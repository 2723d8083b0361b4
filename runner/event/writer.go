package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// Writer is the JSONL sink: one JSON object per line, the envelope (v, seq,
// time, run_id, type) followed by the payload's fields. Each line is written
// with a single Write call and flushed as it happens, so a killed run still
// leaves a readable log. Emit is safe for concurrent use; seq is strictly
// increasing in file order.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	runID  string
	seq    int64
	closed bool
	owned  io.Closer // closed by Close when the Writer opened the file
	// off is the length of the log's complete lines, where a failed write
	// is cut back to (when w can be: a rewinder)
	off    int64
	rw     rewinder // w, when it is a file that can be cut back; nil otherwise
	torn   bool     // a failed write left part of a line that could not be cut back
	now    func() time.Time
	redact *Redactor
}

// Option configures a Writer.
type Option func(*Writer)

// WithClock sets the clock used for "time" (default time.Now); for tests.
func WithClock(now func() time.Time) Option {
	return func(w *Writer) { w.now = now }
}

// WithRedactor passes every line through r before it is written: every
// string in the payload, including object keys, is redacted.
func WithRedactor(r *Redactor) Option {
	return func(w *Writer) { w.redact = r }
}

// NewWriter returns a Writer that writes lines of run runID to w. The caller
// keeps ownership of w; Close syncs it when it has Sync (an *os.File).
func NewWriter(w io.Writer, runID string, opts ...Option) *Writer {
	wr := &Writer{w: w, runID: runID, now: time.Now}
	if rw, ok := w.(rewinder); ok {
		if off, err := rw.Seek(0, io.SeekCurrent); err == nil { // not a pipe or a terminal
			wr.rw, wr.off = rw, off
		}
	}
	for _, o := range opts {
		o(wr)
	}
	return wr
}

// Create creates (or truncates) the file at path and returns a Writer that
// owns it: Close syncs and closes the file.
func Create(path, runID string, opts ...Option) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create event log: %w", err)
	}
	w := NewWriter(f, runID, opts...)
	w.owned = f
	return w, nil
}

// Own returns a Writer of run runID that writes to w and owns it: Close
// syncs w (when it has Sync) and closes it. The pipeline passes the event
// log's file this way when it mirrors it (internal/mirror).
func Own(w io.WriteCloser, runID string, opts ...Option) *Writer {
	wr := NewWriter(w, runID, opts...)
	wr.owned = w
	return wr
}

// Emit writes p as the next line. It returns ErrClosed after Close and a
// wrapped error when p cannot be encoded or the line cannot be written
// (a full disk: the file is cut back to its last complete line, and later
// lines may still be written when there is room again; ErrTorn once a
// writer that cannot be cut back took part of a line); seq is only
// consumed by lines that were written.
func (w *Writer) Emit(p Payload) error {
	if p == nil {
		return ErrNilPayload
	}
	body, err := marshalJSON(p)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", p.EventType(), err)
	}
	if len(body) < 2 || body[0] != '{' {
		return fmt.Errorf("encode %s event: payload is not a JSON object", p.EventType())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	env := Envelope{V: Version, Seq: w.seq + 1, Time: w.now().UTC(), RunID: w.runID, Type: p.EventType()}
	line, err := joinLine(env, body)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", p.EventType(), err)
	}
	if w.redact != nil {
		line = w.redact.RedactJSON(line)
	}
	if w.torn {
		return fmt.Errorf("write %s event: %w", p.EventType(), ErrTorn)
	}
	if err := w.write(line); err != nil {
		return fmt.Errorf("write %s event: %w", p.EventType(), err)
	}
	w.seq++
	if f, ok := w.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("flush %s event: %w", p.EventType(), err)
		}
	}
	return nil
}

// rewinder is a log that a failed write can be cut back on (an
// *os.File).
type rewinder interface {
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// write writes one whole line or, failing (a full disk), none: a file is
// cut back to its last complete line, so the log never ends in half a
// line and seq stays gapless; a writer that cannot be cut back is marked
// torn and takes no more lines. Called with w.mu held.
func (w *Writer) write(line []byte) error {
	n, err := w.w.Write(line)
	if err == nil {
		w.off += int64(n)
		return nil
	}
	if n == 0 {
		return err
	}
	rw := w.rw
	if rw == nil {
		w.torn = true
		return err
	}
	if terr := rw.Truncate(w.off); terr != nil {
		w.torn = true
		return fmt.Errorf("%w (and cutting the partial line back failed: %w)", err, terr)
	}
	if _, serr := rw.Seek(w.off, io.SeekStart); serr != nil {
		w.torn = true
		return fmt.Errorf("%w (and cutting the partial line back failed: %w)", err, serr)
	}
	return fmt.Errorf("%w (the log ends at its last complete line)", err)
}

// Seq returns the seq of the last line written (0 before the first).
func (w *Writer) Seq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// Close flushes and syncs the underlying writer (fsync for an *os.File) and
// closes the file when the Writer created it. It needs no context: it is
// meant to run after the run's context was cancelled. Close is idempotent;
// later Emits return ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if f, ok := w.w.(interface{ Flush() error }); ok {
		err = f.Flush()
	}
	if f, ok := w.w.(interface{ Sync() error }); ok {
		if serr := f.Sync(); serr != nil && err == nil && !isUnsyncable(serr) {
			err = serr
		}
	}
	if w.owned != nil {
		if cerr := w.owned.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("close event log: %w", err)
	}
	return nil
}

// isUnsyncable reports errors of Sync on files that cannot be synced
// (pipes, terminals: stdout), which are not failures of the log.
func isUnsyncable(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP)
}

// joinLine writes the envelope, then the payload's fields, then '\n'.
func joinLine(env Envelope, body []byte) ([]byte, error) {
	head, err := marshalJSON(env)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(head) + len(body) + 2)
	b.Write(head[:len(head)-1]) // drop '}'
	if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
		b.WriteByte(',')
		b.Write(inner)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// marshalJSON encodes v compactly without HTML escaping (so "<", ">" and
// "&" stay readable in the log).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
