package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// TestAnnotateSpecErr checks the annotations of validate's errors,
// wrapped or not, with characters that would end a workflow command.
func TestAnnotateSpecErr(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"positioned, wrapped", fmt.Errorf("check: %w", spec.Errors{
			{File: "t.yaml", Line: 2, Col: 3, Msg: "bad\r\nvalue 100%", Hint: "fix it"},
			{File: "t.yaml", Line: 5, Col: 1, Msg: "second"},
		}), "::error file=t.yaml,line=2,col=3,title=runner validate::bad%0D%0Avalue 100%25 (fix it)\n" +
			"::error file=t.yaml,line=5,col=1,title=runner validate::second\n"},
		{"single", &spec.Error{File: "dir,x/t:y.yaml", Line: 1, Col: 1, Msg: "m"},
			"::error file=dir%2Cx/t%3Ay.yaml,line=1,col=1,title=runner validate::m\n"},
		{"unpositioned", errors.New("read spec: gone\nreally"),
			"::error file=f.yaml,title=runner validate::read spec: gone%0Areally\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := annotateSpecErr(&workflowcmd.Writer{W: &out}, "f.yaml", tt.err); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("annotations:\n%q\nwant\n%q", out.String(), tt.want)
			}
		})
	}
	var nilWriter *workflowcmd.Writer
	if err := annotateSpecErr(nilWriter, "f.yaml", errors.New("x")); err != nil {
		t.Errorf("nil writer: %v", err)
	}
}
