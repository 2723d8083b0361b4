package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// streamFacts are the framing facts the SSE adaptor learns while go-openai
// reads the body. go-openai keeps them private (its isFinished flag), so a
// cut stream cannot otherwise be told from a clean end.
type streamFacts struct {
	Done     bool // "data: [DONE]" went past
	EOF      bool // the body ended cleanly (io.EOF)
	Comments int  // ": ..." lines seen (keep-alives, "PROCESSING")
	Events   int  // data events passed on
}

// sseReader re-frames a Server-Sent Events body into the one shape that
// go-openai's line reader (stream_reader.go, processLines) handles without
// loss: one "data: <payload>\n\n" event after another and nothing else.
//
// It drops comment, event, id and retry lines and collapses runs of blank
// lines (go-openai counts every non-data line against EmptyMessagesLimit and
// keeps it in an error accumulator that is never reset); joins multi-line
// data into one line; dispatches
// an event left without a trailing newline at EOF (go-openai discards it);
// rewrites "event: error" events to {"error": payload}; and writes payloads
// that begin `{"error"` as `{ "error"` so go-openai's error-prefix path,
// which loses non-object errors and any metadata, never fires: every payload
// reaches RecvRaw whole and one decoder classifies all in-stream errors.
// After [DONE] it stops reading the underlying body.
type sseReader struct {
	src      *bufio.Reader
	closer   io.Closer
	facts    *streamFacts
	activity func() // called whenever bytes arrive (idle timer reset)

	out      []byte // framed output not yet returned
	outPos   int
	data     []byte // data of the event being assembled
	hasData  bool
	event    []byte // event name of the event being assembled
	lineBuf  []byte // the line being read
	skipLF   bool   // the last line ended with CR: skip an LF that follows
	started  bool   // past a leading byte order mark
	finished bool
	err      error // returned once out is drained and finished is set
}

func newSSEReader(body io.ReadCloser, facts *streamFacts, activity func()) *sseReader {
	if activity == nil {
		activity = func() {}
	}
	return &sseReader{
		src:      bufio.NewReaderSize(body, 64<<10),
		closer:   body,
		facts:    facts,
		activity: activity,
	}
}

// Read implements io.Reader over the re-framed stream.
func (r *sseReader) Read(p []byte) (int, error) {
	for r.outPos == len(r.out) {
		r.out, r.outPos = r.out[:0], 0
		if r.finished {
			return 0, r.err
		}
		r.fill()
	}
	n := copy(p, r.out[r.outPos:])
	r.outPos += n
	return n, nil
}

// Close closes the underlying body.
func (r *sseReader) Close() error { return r.closer.Close() }

// fill reads one line of the source and frames whatever it completes.
func (r *sseReader) fill() {
	line, err := r.readLine()
	if err == nil || len(line) > 0 {
		r.activity()
		r.line(line)
	}
	if err == nil || r.finished {
		return
	}
	if errors.Is(err, io.EOF) {
		r.dispatch() // a last event without its trailing newline
		r.facts.EOF = true
	}
	r.finished, r.err = true, err
}

// readLine returns the next line without its end of line. Lines end at
// CRLF, LF or a lone CR (WHATWG HTML, "Parsing an event stream"); a CR is
// taken as the end at once, and an LF right after it is skipped when the
// next line is read, so a CR-terminated event is dispatched without
// waiting for more bytes. A UTF-8 byte order mark before the first line is
// dropped. At the end of the body the unterminated rest is returned with
// the error. The slice is valid until the next call.
func (r *sseReader) readLine() ([]byte, error) {
	r.lineBuf = r.lineBuf[:0]
	for {
		if r.src.Buffered() == 0 {
			if _, err := r.src.Peek(1); err != nil {
				return r.lineBuf, err
			}
		}
		buf, _ := r.src.Peek(r.src.Buffered())
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				_, _ = r.src.Discard(1)
				continue
			}
		}
		if !r.started {
			if len(buf) < len(bom) && bytes.HasPrefix(bom, buf) {
				if _, err := r.src.Peek(len(bom)); err == nil {
					continue // the whole mark may follow
				}
			}
			r.started = true
			if bytes.HasPrefix(buf, bom) {
				_, _ = r.src.Discard(len(bom))
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			r.lineBuf = append(r.lineBuf, buf...)
			_, _ = r.src.Discard(len(buf))
			continue
		}
		r.lineBuf = append(r.lineBuf, buf[:i]...)
		r.skipLF = buf[i] == '\r'
		_, _ = r.src.Discard(i + 1)
		return r.lineBuf, nil
	}
}

// bom is the UTF-8 byte order mark.
var bom = []byte("\xEF\xBB\xBF")

// line handles one line without its end-of-line bytes.
func (r *sseReader) line(line []byte) {
	if len(line) == 0 {
		r.dispatch()
		return
	}
	if line[0] == ':' {
		r.facts.Comments++
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else if line[0] == '{' || line[0] == '[' {
		// A bare JSON line (a 200 response that is not SSE): take it as data.
		field, value = []byte("data"), line
	}
	switch string(field) {
	case "data":
		r.appendData(value)
	case "event":
		r.event = append(r.event[:0], value...)
	}
	// id, retry and unknown fields are ignored.
}

// appendData adds one data line to the pending event. A data line that
// follows a complete JSON payload without a blank line between them starts
// a new event (servers that omit the blank separator).
func (r *sseReader) appendData(value []byte) {
	if r.hasData && (isDone(r.data) || isDone(value) || json.Valid(r.data)) {
		r.dispatch()
	}
	if r.hasData {
		r.data = append(r.data, ' ') // JSON whitespace; keeps one line per event
	}
	r.data = append(r.data, value...)
	r.hasData = true
}

// dispatch frames the pending event, if any.
func (r *sseReader) dispatch() {
	if !r.hasData {
		r.event = r.event[:0]
		return
	}
	payload := bytes.TrimSpace(r.data)
	if string(r.event) == "error" {
		payload = wrapErrorEvent(payload)
	}
	r.data, r.hasData, r.event = r.data[:0], false, r.event[:0]
	switch {
	case len(payload) == 0:
		return
	case isDone(payload):
		r.facts.Done = true
		r.out = append(r.out, "data: [DONE]\n\n"...)
		r.finished, r.err = true, io.EOF
		return
	case bytes.HasPrefix(payload, []byte(`{"error"`)):
		r.out = append(r.out, "data: { "...)
		payload = payload[1:]
	default:
		r.out = append(r.out, "data: "...)
	}
	r.facts.Events++
	r.out = append(r.out, payload...)
	r.out = append(r.out, "\n\n"...)
}

// wrapErrorEvent turns the data of an "event: error" event into a payload
// with a top-level error member, unless it already has one.
func wrapErrorEvent(payload []byte) []byte {
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(payload, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return payload
	}
	inner := payload
	if !json.Valid(inner) {
		inner, _ = json.Marshal(string(payload))
	}
	out := make([]byte, 0, len(inner)+10)
	out = append(out, `{"error":`...)
	out = append(out, inner...)
	return append(out, '}')
}

func isDone(b []byte) bool { return string(bytes.TrimSpace(b)) == "[DONE]" }
