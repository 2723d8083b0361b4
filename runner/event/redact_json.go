package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
)

// RedactJSON redacts every string (values and keys) of the JSON text b,
// matching secrets against the decoded strings, so JSON-escaped forms of a
// secret (quotes, backslashes, \n in a key block, \u escapes) are caught. It
// returns b itself when nothing changed. Text that is not valid JSON is
// redacted as plain bytes from the first point the scan fails.
func (r *Redactor) RedactJSON(b []byte) []byte {
	if r == nil {
		return b
	}
	var out []byte // nil until the first change
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, esc := stringEnd(b, i)
		if end < 0 {
			tail := r.RedactBytes(b[i:])
			if out == nil && bytes.Equal(tail, b[i:]) {
				return b
			}
			return splice(out, b, last, i, tail)
		}
		lit := b[i : end+1]
		repl, changed := r.redactLiteral(lit, esc)
		if changed {
			out = splice(out, b, last, i, repl)
			last = end + 1
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// splice appends b[last:from] then repl to out, starting out when nil.
func splice(out, b []byte, last, from int, repl []byte) []byte {
	if out == nil {
		out = make([]byte, 0, len(b)+16)
	}
	out = append(out, b[last:from]...)
	return append(out, repl...)
}

// stringEnd returns the index of the closing quote of the string literal
// opening at b[start] and whether it holds escapes; -1 when unterminated.
func stringEnd(b []byte, start int) (int, bool) {
	esc := false
	for k := start + 1; k < len(b); k++ {
		switch b[k] {
		case '\\':
			esc = true
			k++
		case '"':
			return k, esc
		}
	}
	return -1, esc
}

// redactLiteral redacts one JSON string literal (quotes included).
func (r *Redactor) redactLiteral(lit []byte, esc bool) ([]byte, bool) {
	var s string
	if esc {
		if err := json.Unmarshal(lit, &s); err != nil {
			red := r.RedactBytes(lit)
			return red, !bytes.Equal(red, lit)
		}
	} else {
		s = string(lit[1 : len(lit)-1])
	}
	red := r.Redact(s)
	if red == s {
		return lit, false
	}
	enc, err := marshalJSON(red)
	if err != nil { // cannot happen for a string; keep the text safe anyway
		return []byte(`"` + Redacted + `"`), true
	}
	return enc, true
}

// Redacting returns a Sink that redacts every string of every payload
// before passing it to next. Payloads without secrets pass through
// unchanged; others are re-decoded into a fresh value of the same type.
func Redacting(next Sink, r *Redactor) Sink {
	return redactingSink{next: next, r: r}
}

type redactingSink struct {
	next Sink
	r    *Redactor
}

func (s redactingSink) Emit(p Payload) error {
	if p == nil {
		return ErrNilPayload
	}
	raw, err := marshalJSON(p)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", p.EventType(), err)
	}
	red := s.r.RedactJSON(raw)
	if bytes.Equal(red, raw) {
		return s.next.Emit(p)
	}
	clean, err := decodeLike(p, red)
	if err != nil {
		return fmt.Errorf("redact %s event: %w", p.EventType(), err)
	}
	return s.next.Emit(clean)
}

// decodeLike decodes data into a new value of p's dynamic type.
func decodeLike(p Payload, data []byte) (Payload, error) {
	t := reflect.TypeOf(p)
	ptr := t.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	v := reflect.New(t)
	if err := json.Unmarshal(data, v.Interface()); err != nil {
		return nil, err
	}
	if ptr {
		return v.Interface().(Payload), nil
	}
	return v.Elem().Interface().(Payload), nil
}

// RedactingWriter returns a writer that redacts each Write's bytes before
// passing them to w. A secret split across two Writes is not caught: write
// whole lines or documents (fmt.Fprintf, the console, summaries do).
func RedactingWriter(w io.Writer, r *Redactor) io.Writer {
	return redactingWriter{w: w, r: r}
}

type redactingWriter struct {
	w io.Writer
	r *Redactor
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	red := rw.r.RedactBytes(p)
	n, err := rw.w.Write(red)
	if err != nil {
		return 0, err
	}
	if n < len(red) {
		return 0, io.ErrShortWrite
	}
	return len(p), nil
}
