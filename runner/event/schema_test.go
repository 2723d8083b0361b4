package event

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSchemaCopyIsIdentical(t *testing.T) {
	root, err := os.ReadFile(filepath.Join("..", "..", "schema", "events.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, SchemaJSON()) {
		t.Error("schema/events.schema.json differs from runner/event/events.schema.json; copy the canonical one over it")
	}
}

func TestSchemaValidate(t *testing.T) {
	v := mustValidator(t)
	const env = `"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","run_id":"r"`
	tokens := `"tokens":{"input":1,"output":1,"reasoning":0,"cache_read":0,"cache_write":0}`
	finished := `"exit_code":1,"final_message":"","structured_output":null,"steps":1,` + tokens + `,"cost_usd":null,"duration_ms":1,"patch_path":"","files_changed":0`
	tests := []struct {
		name string
		line string
		ok   bool
	}{
		{"step started", `{` + env + `,"type":"step.started","step":1}`, true},
		{"missing seq", `{"v":1,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"step.started","step":1}`, false},
		{"wrong version", `{"v":2,"seq":1,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"step.started","step":1}`, false},
		{"seq zero", `{"v":1,"seq":0,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"step.started","step":1}`, false},
		{"not UTC", `{"v":1,"seq":1,"time":"2026-01-02T03:04:05+02:00","run_id":"r","type":"step.started","step":1}`, false},
		{"not a time", `{"v":1,"seq":1,"time":"yesterday Z","run_id":"r","type":"step.started","step":1}`, false},
		{"unknown type", `{` + env + `,"type":"step.paused","step":1}`, false},
		{"unknown field", `{` + env + `,"type":"step.started","step":1,"extra":true}`, false},
		{"missing payload field", `{` + env + `,"type":"step.started"}`, false},
		{"bad finish reason", `{` + env + `,"type":"step.finished","step":1,"finish_reason":"done",` + tokens + `,"cost_usd":null,"duration_ms":1}`, false},
		{"step finished", `{` + env + `,"type":"step.finished","step":1,"finish_reason":"content-filter",` + tokens + `,"cost_usd":0.5,"duration_ms":1}`, true},
		{"tool input null with raw", `{` + env + `,"type":"tool.started","step":1,"call_id":"c","tool":"read","input":null,"input_raw":"{"}`, true},
		{"tool input null without raw", `{` + env + `,"type":"tool.started","step":1,"call_id":"c","tool":"read","input":null}`, false},
		{"tool input not object", `{` + env + `,"type":"tool.started","step":1,"call_id":"c","tool":"read","input":[1]}`, false},
		{"denied default rule", `{` + env + `,"type":"permission.denied","step":1,"call_id":"c","tool":"bash","permission":"bash","pattern":"rm x","rule":null,"reason":"default"}`, true},
		{"run finished failed with error", `{` + env + `,"type":"run.finished","status":"failed",` + finished + `,"error":{"class":"checks","message":"tests failed"}}`, true},
		{"run finished failed without error", `{` + env + `,"type":"run.finished","status":"failed",` + finished + `}`, false},
		{"run finished success with error", `{` + env + `,"type":"run.finished","status":"success",` + finished + `,"error":{"class":"x","message":"y"}}`, false},
		{"run finished bad status", `{` + env + `,"type":"run.finished","status":"done",` + finished + `,"error":{"class":"x","message":"y"}}`, false},
		{"patch file bad status", `{` + env + `,"type":"patch","step":null,"tree":"t","files":[{"path":"a","status":"copied","additions":0,"deletions":0,"binary":false}],"additions":0,"deletions":0}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Validate([]byte(tt.line))
			if tt.ok && err != nil {
				t.Errorf("valid line rejected: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalid) {
				t.Errorf("invalid line: err = %v, want ErrInvalid", err)
			}
		})
	}
	if err := v.Validate([]byte(`{"v":`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("non-JSON: %v, want ErrMalformed", err)
	}
}

func TestValidateLogOrder(t *testing.T) {
	v := mustValidator(t)
	const a = `{"v":1,"seq":1,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"step.started","step":1}` + "\n"
	const b = `{"v":1,"seq":2,"time":"2026-01-02T03:04:05Z","run_id":"r","type":"step.started","step":2}` + "\n"
	tests := []struct {
		name string
		log  string
		ok   bool
	}{
		{"in order", a + b, true},
		{"out of order", b + a, false},
		{"truncated", a + b[:20], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateLog([]byte(tt.log))
			if (err == nil) != tt.ok {
				t.Errorf("ValidateLog = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
