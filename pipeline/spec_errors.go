package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// SpecError is one problem in a task spec: where it is, what is wrong and,
// when there is something to say, what to do about it.
type SpecError struct {
	File string
	Line int // 1-based
	Col  int // 1-based
	Msg  string
	Hint string
}

// Error formats the error as "file:line:col: msg (hint)".
func (e *SpecError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

// Is reports whether target is ErrInvalidSpec.
func (e *SpecError) Is(target error) bool { return target == ErrInvalidSpec }

// SpecErrors are all the problems found in one or more spec files, in file
// order. It matches ErrInvalidSpec with errors.Is.
type SpecErrors []*SpecError

// Error prints one error per line.
func (es SpecErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Is reports whether target is ErrInvalidSpec.
func (es SpecErrors) Is(target error) bool { return target == ErrInvalidSpec }

// Unwrap returns the individual errors.
func (es SpecErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sorted returns the errors ordered by file, line and column, without
// duplicates.
func (es SpecErrors) sorted() SpecErrors {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b *SpecError) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return slices.CompactFunc(out, func(a, b *SpecError) bool { return *a == *b })
}

// Sorted returns the errors ordered by file, line and column, without
// duplicates: the order in which spec loaders report them.
func (es SpecErrors) Sorted() SpecErrors { return es.sorted() }
