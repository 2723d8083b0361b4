package batch

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// SpecError is the task spec's error type (spec.Error), reused so that
// `runner validate`, error printing and exit codes treat batch and task
// specs alike.
type SpecError = spec.Error

// SpecErrors is spec.Errors: every problem of a batch spec; it matches
// ErrInvalidSpec with errors.Is.
type SpecErrors = spec.Errors

// decoder is the task spec's positioned YAML decoder (spec.Decoder) with
// the batch spec's sections as methods.
type decoder struct {
	*spec.Decoder
	src []byte // the batch file
}

// pos is n's position, "file:line:col".
func (d decoder) pos(n *yaml.Node) string { return fmt.Sprintf("%s:%d:%d", d.File(), n.Line, n.Column) }

// hintf records a problem at n (nil: the top of the file).
func (d decoder) hintf(n *yaml.Node, hint, format string, args ...any) {
	if n == nil {
		d.ErrorAtPos(spec.Pos{Line: 1, Col: 1}, hint, format, args...)
		return
	}
	d.ErrorAt(n, hint, format, args...)
}

func (d decoder) errorf(n *yaml.Node, format string, args ...any) { d.hintf(n, "", format, args...) }
