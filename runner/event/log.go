package event

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Record is one line of an event log read back: the envelope, the whole line
// as written, and the payload decoded on demand.
type Record struct {
	Envelope
	// Line is the 1-based line number in the log.
	Line int `json:"-"`
	// Raw is the whole JSON object of the line (envelope and payload fields).
	Raw json.RawMessage `json:"-"`
}

// Payload decodes the record into the payload type of its "type". It
// returns ErrUnknownType for types this version does not know.
func (r Record) Payload() (Payload, error) {
	p, ok := NewPayload(r.Type)
	if !ok {
		return nil, fmt.Errorf("line %d: %q: %w", r.Line, r.Type, ErrUnknownType)
	}
	if err := json.Unmarshal(r.Raw, p); err != nil {
		return nil, fmt.Errorf("line %d: decode %s: %w", r.Line, r.Type, err)
	}
	return derefPayload(p), nil
}

// Decode unmarshals the line into v (a payload struct pointer, or anything
// else that fits the line).
func (r Record) Decode(v any) error {
	if err := json.Unmarshal(r.Raw, v); err != nil {
		return fmt.Errorf("line %d: decode %s: %w", r.Line, r.Type, err)
	}
	return nil
}

// NewPayload returns a pointer to a zero payload of event type typ.
func NewPayload(typ string) (Payload, bool) {
	switch typ {
	case RunStarted{}.EventType():
		return &RunStarted{}, true
	case StepStarted{}.EventType():
		return &StepStarted{}, true
	case Text{}.EventType():
		return &Text{}, true
	case Reasoning{}.EventType():
		return &Reasoning{}, true
	case ToolStarted{}.EventType():
		return &ToolStarted{}, true
	case ToolCompleted{}.EventType():
		return &ToolCompleted{}, true
	case ToolFailed{}.EventType():
		return &ToolFailed{}, true
	case PermissionDenied{}.EventType():
		return &PermissionDenied{}, true
	case Retry{}.EventType():
		return &Retry{}, true
	case Compaction{}.EventType():
		return &Compaction{}, true
	case StepFinished{}.EventType():
		return &StepFinished{}, true
	case Patch{}.EventType():
		return &Patch{}, true
	case CheckStarted{}.EventType():
		return &CheckStarted{}, true
	case CheckFinished{}.EventType():
		return &CheckFinished{}, true
	case Publish{}.EventType():
		return &Publish{}, true
	case GateFailed{}.EventType():
		return &GateFailed{}, true
	case NetworkAccess{}.EventType():
		return &NetworkAccess{}, true
	case RunFinished{}.EventType():
		return &RunFinished{}, true
	}
	return nil, false
}

// Types lists every event type of schema v1, in the order of a run.
func Types() []string {
	return []string{"run.started", "step.started", "text", "reasoning", "tool.started",
		"tool.completed", "tool.failed", "permission.denied", "retry", "compaction",
		"step.finished", "patch", "check.started", "check.finished", "gate.failed", "network.access", "publish", "run.finished"}
}

// derefPayload turns the pointer NewPayload returned into the value type the
// writers emit, so type switches on values work on decoded records.
func derefPayload(p Payload) Payload {
	switch v := p.(type) {
	case *RunStarted:
		return *v
	case *StepStarted:
		return *v
	case *Text:
		return *v
	case *Reasoning:
		return *v
	case *ToolStarted:
		return *v
	case *ToolCompleted:
		return *v
	case *ToolFailed:
		return *v
	case *PermissionDenied:
		return *v
	case *Retry:
		return *v
	case *Compaction:
		return *v
	case *StepFinished:
		return *v
	case *Patch:
		return *v
	case *CheckStarted:
		return *v
	case *CheckFinished:
		return *v
	case *GateFailed:
		return *v
	case *NetworkAccess:
		return *v
	case *Publish:
		return *v
	case *RunFinished:
		return *v
	}
	return p
}

// ReadLog reads an event log. Blank lines are skipped. A last line without
// its newline that does not parse is the tail of a killed run and is
// dropped silently; any other bad line is an error naming its line number
// (wrapping ErrMalformed or ErrVersion), returned with the records before it.
func ReadLog(r io.Reader) ([]Record, error) {
	recs, _, err := ReadLogCut(r)
	return recs, err
}

// ReadLogCut is ReadLog that also returns the number (1-based) of the
// last line it dropped as a killed run's cut tail, 0 when none was.
func ReadLogCut(r io.Reader) (recs []Record, cut int, err error) {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return recs, 0, fmt.Errorf("read event log line %d: %w", n, err)
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			rec, perr := ParseLine(trimmed)
			switch {
			case perr == nil:
				rec.Line = n
				recs = append(recs, rec)
			case !complete && errors.Is(perr, ErrMalformed):
				return recs, n, nil // truncated tail of a killed run
			default:
				return recs, 0, fmt.Errorf("event log line %d: %w", n, perr)
			}
		}
		if err != nil { // io.EOF
			return recs, 0, nil
		}
	}
}

// ParseLine parses one line (without its newline) into a Record, checking
// the envelope: a JSON object with v = 1, seq ≥ 1, a time and a type.
func ParseLine(line []byte) (Record, error) {
	var env Envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	switch {
	case env.V != Version:
		return Record{}, fmt.Errorf("%w: v is %d, want %d", ErrVersion, env.V, Version)
	case env.Seq < 1:
		return Record{}, fmt.Errorf("%w: seq %d", ErrMalformed, env.Seq)
	case env.Type == "":
		return Record{}, fmt.Errorf("%w: no type", ErrMalformed)
	case env.Time.IsZero():
		return Record{}, fmt.Errorf("%w: no time", ErrMalformed)
	}
	raw := make(json.RawMessage, len(line))
	copy(raw, line)
	return Record{Envelope: env, Raw: raw}, nil
}
