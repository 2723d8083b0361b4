package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline"
)

func TestReport(t *testing.T) {
	specErrs := pipeline.SpecErrors{
		{File: "a.yaml", Line: 1, Col: 2, Msg: "first"},
		{File: "a.yaml", Line: 3, Col: 4, Msg: "second", Hint: "fix it"},
	}
	other := pipeline.SpecErrors{{File: "b.yaml", Line: 5, Col: 6, Msg: "third"}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"plain", errors.New("boom"), "runner: boom\n"},
		{"spec errors", specErrs, "a.yaml:1:2: first\na.yaml:3:4: second (fix it)\n"},
		{"wrapped by a stage", fmt.Errorf("spec: %w", specErrs), "a.yaml:1:2: first\na.yaml:3:4: second (fix it)\n"},
		{"joined", errors.Join(specErrs, errors.New("read x: gone"), other),
			"a.yaml:1:2: first\na.yaml:3:4: second (fix it)\nrunner: read x: gone\nb.yaml:5:6: third\n"},
		{"positioned text", fmt.Errorf("c.yaml:1:1: input %q is required", "x"), "c.yaml:1:1: input \"x\" is required\n"},
		{"exit error", &pipeline.ExitError{Code: 2, Err: other}, "b.yaml:5:6: third\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		report(&b, tt.err)
		if b.String() != tt.want {
			t.Errorf("%s: report wrote %q, want %q", tt.name, b.String(), tt.want)
		}
	}
}
