package event

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is the canonical JSON Schema of a log line. The copy in
// schema/events.schema.json at the repository root is kept identical by a
// test (go:embed cannot reach outside this package).
//
//go:embed events.schema.json
var schemaJSON []byte

// schemaURL is the schema's $id.
const schemaURL = "https://raw.githubusercontent.com/seed43ef5acb/runner/main/schema/events.schema.json"

// SchemaJSON returns a copy of the JSON Schema (draft 2020-12) of a log line.
func SchemaJSON() []byte {
	return bytes.Clone(schemaJSON)
}

// Validator checks log lines against the schema. It is safe for concurrent
// use. Tests of other packages use it to validate every line they write.
type Validator struct {
	schema *jsonschema.Schema
}

// NewSchemaValidator compiles the embedded schema, asserting formats
// (date-time).
func NewSchemaValidator() (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("parse event schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("load event schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("compile event schema: %w", err)
	}
	return &Validator{schema: sch}, nil
}

// Validate checks one line (one JSON object; a trailing newline is
// allowed). The error wraps ErrInvalid, or ErrMalformed when the line is
// not JSON, and describes every violation.
func (v *Validator) Validate(line []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(bytes.TrimSpace(line)))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := v.schema.Validate(inst); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// ValidateLog validates every line of data (a whole log) and checks that
// seq counts 1, 2, …, that run.finished, when present, is the last line,
// and that the log ends with a newline (no truncated tail).
func (v *Validator) ValidateLog(data []byte) error {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return fmt.Errorf("%w: the last line has no newline", ErrInvalid)
	}
	recs, err := ReadLog(bytes.NewReader(data))
	if err != nil {
		return err
	}
	for i, rec := range recs {
		if err := v.Validate(rec.Raw); err != nil {
			return fmt.Errorf("event log line %d: %w", rec.Line, err)
		}
		if rec.Seq != int64(i+1) {
			return fmt.Errorf("event log line %d: %w: seq %d, want %d", rec.Line, ErrInvalid, rec.Seq, i+1)
		}
		if rec.Type == (RunFinished{}).EventType() && i != len(recs)-1 {
			return fmt.Errorf("event log line %d: %w: run.finished is not the last line", rec.Line, ErrInvalid)
		}
	}
	return nil
}
