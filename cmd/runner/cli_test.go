package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

func TestReport(t *testing.T) {
	specErrs := spec.Errors{
		{File: "a.yaml", Line: 1, Col: 2, Msg: "first"},
		{File: "a.yaml", Line: 3, Col: 4, Msg: "second", Hint: "fix it"},
	}
	other := spec.Errors{{File: "b.yaml", Line: 5, Col: 6, Msg: "third"}}
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
		{"two wrapped sentinels stay one message", fmt.Errorf("%w: --fail-on: %w", pipeline.ErrUsage, errors.New("unknown status")),
			"runner: usage error: --fail-on: unknown status\n"},
		{"quiet", &quietError{&pipeline.ExitError{Code: 1, Err: ErrDenied}}, ""},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		report(&b, tt.err)
		if b.String() != tt.want {
			t.Errorf("%s: report wrote %q, want %q", tt.name, b.String(), tt.want)
		}
	}
}

func TestUsageCommand(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "runner --help"},
		{[]string{"exec"}, "runner exec --help"},
		{[]string{"batch", "run", "b.yaml"}, "runner batch run --help"},
		{[]string{"policy", "check", "t.yaml", "--bash", "x", "--read", "y"}, "runner policy check --help"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := runCLI(t.Context(), tt.args, Streams{Stdout: &stdout, Stderr: &stderr}, nil)
		if code != pipeline.ExitUsage || !strings.Contains(stderr.String(), fmt.Sprintf("run %q for usage", tt.want)) {
			t.Errorf("runner %v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
