package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
)

// RedactJSON redacts every string (values and keys) of the JSON text b
// (ciphertext under opaqueKeys only of exact values), matching secrets against the decoded strings, so JSON-escaped forms of a
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
		var repl []byte
		var changed bool
		if !esc && opaqueValue(b, i) && cipherShaped(lit[1:len(lit)-1]) && !r.shapeAtStart(lit[1:len(lit)-1]) {
			repl, changed = r.redactLiterals(lit)
		} else {
			repl, changed = r.redactLiteral(lit, esc)
		}
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

// opaqueKeys name members whose string values are a provider's ciphertext
// or signature, sent back verbatim on the next request (Anthropic's
// thinking signature, OpenAI's encrypted reasoning). When such a value is
// cipherShaped, only exact secret values are replaced in it: a token shape
// found in base64 by chance is no secret, and replacing it would make the
// provider reject the turn.
func opaqueKeys() []string { return []string{"encrypted_content", "signature"} }

// opaqueValue reports whether the string literal at b[start] is the value
// of a member named in opaqueKeys.
func opaqueValue(b []byte, start int) bool {
	j := start - 1
	for j >= 0 && isJSONSpace(b[j]) {
		j--
	}
	if j < 0 || b[j] != ':' {
		return false
	}
	j--
	for j >= 0 && isJSONSpace(b[j]) {
		j--
	}
	for _, k := range opaqueKeys() {
		key := `"` + k + `"`
		if j+1 >= len(key) && string(b[j+1-len(key):j+1]) == key {
			return true
		}
	}
	return false
}

// cipherShaped reports whether v looks like base64 ciphertext: 64 bytes or
// more of the base64 and base64url alphabets.
func cipherShaped(v []byte) bool {
	if len(v) < 64 {
		return false
	}
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// shapeAtStart reports whether a token shape begins v: a whole secret, not
// a chance match inside ciphertext.
func (r *Redactor) shapeAtStart(v []byte) bool {
	for _, p := range r.patterns {
		if loc := p.re.FindIndex(v); loc != nil && loc[0] == 0 {
			return true
		}
	}
	return false
}

// redactLiterals replaces only the exact secret values in an opaque
// literal; a token shape inside ciphertext is chance, not a secret.
func (r *Redactor) redactLiterals(lit []byte) ([]byte, bool) {
	lits := r.literals.Load()
	if lits == nil {
		return lit, false
	}
	out := lits.rep.Replace(string(lit))
	return []byte(out), out != string(lit)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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
