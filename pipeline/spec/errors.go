package spec

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a task spec: where it is, what is wrong and,
// when there is something to say, what to do about it.
type Error struct {
	File string
	Line int // 1-based
	Col  int // 1-based
	Msg  string
	Hint string
}

// Error formats the error as "file:line:col: msg (hint)".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

// Is reports whether target is ErrInvalidSpec.
func (e *Error) Is(target error) bool { return target == ErrInvalidSpec }

// Errors are all the problems found in one or more spec files, in file
// order. It matches ErrInvalidSpec with errors.Is.
type Errors []*Error

// Error prints one error per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Is reports whether target is ErrInvalidSpec.
func (es Errors) Is(target error) bool { return target == ErrInvalidSpec }

// Unwrap returns the individual errors.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sorted returns the errors ordered by file, line and column, without
// duplicates.
func (es Errors) sorted() Errors {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b *Error) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return slices.CompactFunc(out, func(a, b *Error) bool { return *a == *b })
}

// Sorted returns the errors ordered by file, line and column, without
// duplicates: the order in which spec loaders report them.
func (es Errors) Sorted() Errors { return es.sorted() }

// Sentinel errors of the spec, matched with errors.Is; the CLI maps them
// to exit code 2 (pipeline.ExitCode).
var (
	// ErrInvalidSpec: the task spec is invalid. Errors and Error match it.
	ErrInvalidSpec = errors.New("invalid task spec")
	// ErrInputs: task inputs are missing or not allowed.
	ErrInputs = errors.New("invalid task inputs")
	// ErrRead: the task spec file cannot be read (missing, unreadable). Its
	// text is worded as the CLI's other usage errors.
	ErrRead = errors.New("usage error: read task spec")
)
