package batch

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// SpecError and SpecErrors are the task spec loader's error types, reused
// so that `runner validate`, error printing and exit codes treat batch and
// task specs alike: SpecErrors matches ErrInvalidSpec with errors.Is.
type (
	SpecError  = spec.Error
	SpecErrors = spec.Errors
)

// decoder walks a yaml.Node tree, collecting positioned errors.
type decoder struct {
	file string
	errs []*SpecError
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.hintf(n, "", format, args...)
}

func (d *decoder) hintf(n *yaml.Node, hint, format string, args ...any) {
	se := &SpecError{File: d.file, Msg: fmt.Sprintf(format, args...), Hint: hint}
	if n != nil {
		se.Line, se.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, se)
}

func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return SpecErrors(d.errs).Sorted()
}

// kindName names a node's kind for "expected X, got Y" messages: a
// non-null scalar is "a scalar (TAG)", anything else is worded as the task
// spec decoder words it.
func kindName(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return "a scalar (" + strings.TrimPrefix(n.Tag, "!!") + ")"
	}
	return spec.YAMLKindName(n)
}

// fields checks that n is a mapping whose keys are all in allowed and
// returns its values by key. Unknown and duplicate keys are reported.
func (d *decoder) fields(n *yaml.Node, what string, allowed ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: expected a mapping, got %s", what, kindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(allowed, k.Value) {
			d.hintf(k, didYouMean(k.Value, allowed), "%s: unknown key %q", what, k.Value)
			continue
		}
		if _, dup := out[k.Value]; dup {
			d.errorf(k, "%s: duplicate key %q", what, k.Value)
			continue
		}
		out[k.Value] = spec.DerefYAML(v)
	}
	return out
}

func (d *decoder) required(n *yaml.Node, m map[string]*yaml.Node, what string, keys ...string) {
	for _, k := range keys {
		if _, ok := m[k]; !ok && n.Kind == yaml.MappingNode {
			d.errorf(n, "%s: missing required key %q", what, k)
		}
	}
}

func (d *decoder) scalar(n *yaml.Node, what string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, "%s: expected a scalar, got %s", what, kindName(n))
		return false
	}
	return true
}

func (d *decoder) str(n *yaml.Node, what string) string {
	if !d.scalar(n, what) {
		return ""
	}
	if n.Tag != "!!str" {
		d.errorf(n, "%s: expected a string, got %s", what, kindName(n))
		return ""
	}
	return n.Value
}

func (d *decoder) integer(n *yaml.Node, what string, minVal int) int {
	var v int
	if !d.scalar(n, what) {
		return 0
	}
	if n.Tag != "!!int" || n.Decode(&v) != nil {
		d.errorf(n, "%s: expected an integer, got %s", what, kindName(n))
		return 0
	}
	if v < minVal {
		d.errorf(n, "%s: must be at least %d, got %d", what, minVal, v)
	}
	return v
}

func (d *decoder) number(n *yaml.Node, what string) float64 {
	var v float64
	if !d.scalar(n, what) {
		return 0
	}
	if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		d.errorf(n, "%s: expected a number, got %s", what, kindName(n))
		return 0
	}
	if v < 0 {
		d.errorf(n, "%s: must not be negative, got %v", what, v)
	}
	return v
}

// stringMap decodes a mapping of scalars; non-string scalars (numbers,
// booleans) are kept as written, since task inputs are strings.
func (d *decoder) stringMap(n *yaml.Node, what string) map[string]string {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: expected a mapping, got %s", what, kindName(n))
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], spec.DerefYAML(n.Content[i+1])
		if _, dup := out[k.Value]; dup {
			d.errorf(k, "%s: duplicate key %q", what, k.Value)
			continue
		}
		if d.scalar(v, what+"."+k.Value) {
			out[k.Value] = v.Value
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// didYouMean suggests the closest allowed key within edit distance 2.
func didYouMean(got string, allowed []string) string {
	best, bestDist := "", 3
	for _, a := range allowed {
		if dist := spec.EditDistance(got, a); dist < bestDist {
			best, bestDist = a, dist
		}
	}
	if best == "" {
		return "allowed: " + strings.Join(allowed, ", ")
	}
	return fmt.Sprintf("did you mean %q?", best)
}
