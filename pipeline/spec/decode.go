package spec

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.v3 node tree and collects every error with its
// position instead of stopping at the first one.
type decoder struct {
	file  string
	src   []byte
	lines []string // src split into lines, on first use
	errs  Errors
	pos   map[string]Pos
}

// fieldFuncs maps the keys of a mapping to the functions decoding their
// values; path is the key's dotted path ("limits.timeout").
type fieldFuncs map[string]func(path string, n *yaml.Node)

func posOf(n *yaml.Node) Pos { return Pos{Line: max(n.Line, 1), Col: max(n.Column, 1)} }

// errorAt records an error at the node's position.
func (d *decoder) errorAt(n *yaml.Node, hint, format string, args ...any) {
	d.errorAtPos(posOf(n), hint, format, args...)
}

func (d *decoder) errorAtPos(p Pos, hint, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// kindName describes a node's type for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return "a string"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		}
		return "a value of type " + n.ShortTag()
	}
	return "a document"
}

// typeError records "where: expected X, got Y".
func (d *decoder) typeError(path string, n *yaml.Node, want, hint string) {
	d.errorAt(n, hint, "%s: expected %s, got %s", path, want, kindName(n))
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// mapping decodes the mapping n at path: known keys go to their functions,
// unknown and duplicate keys are errors. It returns the value nodes by key,
// or nil when n is not a mapping.
func (d *decoder) mapping(path string, n *yaml.Node, fields fieldFuncs) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.typeError(displayPath(path), n, "a mapping", "")
		return nil
	}
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	seen := map[string]*yaml.Node{}
	for key, val := range d.pairs(path, n) {
		fn, ok := fields[key.Value]
		if !ok {
			d.errorAt(key, unknownKeyHint(key.Value, known), "unknown key %q in %s", key.Value, displayPath(path))
			continue
		}
		seen[key.Value] = val
		p := joinPath(path, key.Value)
		d.pos[p] = posOf(val)
		fn(p, val)
	}
	return seen
}

// pairs yields the key and value nodes of a mapping, reporting non-string,
// merge and duplicate keys.
func (d *decoder) pairs(path string, n *yaml.Node) func(yield func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		dup := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := deref(n.Content[i]), deref(n.Content[i+1])
			switch {
			case key.Kind != yaml.ScalarNode:
				d.errorAt(key, "keys are plain names", "%s: a key must be a string, got %s", displayPath(path), kindName(key))
				continue
			case key.ShortTag() == "!!merge":
				d.errorAt(key, "write the keys out", "%s: merge keys (<<) are not supported", displayPath(path))
				continue
			case dup[key.Value]:
				d.errorAt(key, "remove one of them", "duplicate key %q in %s", key.Value, displayPath(path))
				continue
			}
			dup[key.Value] = true
			if !yield(key, val) {
				return
			}
		}
	}
}

// displayPath names a path in messages.
func displayPath(path string) string {
	if path == "" {
		return "the task spec"
	}
	return path
}

// require reports the keys of required missing from seen, at the mapping.
func (d *decoder) require(path string, n *yaml.Node, seen map[string]*yaml.Node, required ...string) {
	if seen == nil {
		return
	}
	for _, k := range required {
		if _, ok := seen[k]; !ok {
			d.errorAt(n, fmt.Sprintf("add %q", k+": ..."), "%s: missing required key %q", displayPath(path), k)
		}
	}
}

// str decodes a string scalar.
func (d *decoder) str(path string, n *yaml.Node) string {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		hint := ""
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
			hint = fmt.Sprintf("quote it: %q", n.Value)
		}
		d.typeError(path, n, "a string", hint)
		return ""
	}
	return n.Value
}

// nonEmpty decodes a string that must not be blank.
func (d *decoder) nonEmpty(path string, n *yaml.Node) string {
	s := d.str(path, n)
	if deref(n).ShortTag() == "!!str" && strings.TrimSpace(s) == "" {
		d.errorAt(n, "give it a value or remove the key", "%s: must not be empty", path)
	}
	return s
}

// scalarText decodes any scalar (string, number, boolean) as its text, for
// input values where `default: 3` means "3".
func (d *decoder) scalarText(path string, n *yaml.Node) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.typeError(path, n, "a string", "")
		return "", false
	}
	return n.Value, true
}

// integer decodes an integer that is at least lo.
func (d *decoder) integer(path string, n *yaml.Node, lo int64) int64 {
	n = deref(n)
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		d.typeError(path, n, "an integer", "")
		return 0
	}
	if v < lo {
		d.errorAt(n, "", "%s: must be at least %d, got %d", path, lo, v)
		return 0
	}
	if v > math.MaxInt32 {
		d.errorAt(n, "", "%s: %d is too large", path, v)
		return 0
	}
	return v
}

// number decodes a non-negative finite number.
func (d *decoder) number(path string, n *yaml.Node) float64 {
	n = deref(n)
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&v) != nil {
		d.typeError(path, n, "a number", "")
		return 0
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		d.errorAt(n, "", "%s: must be a finite number ≥ 0, got %s", path, n.Value)
		return 0
	}
	return v
}

// boolean decodes true or false.
func (d *decoder) boolean(path string, n *yaml.Node) bool {
	n = deref(n)
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.typeError(path, n, "true or false", "")
		return false
	}
	return v
}

// duration decodes a positive Go duration string such as "90s" or "20m".
func (d *decoder) duration(path string, n *yaml.Node) time.Duration {
	n = deref(n)
	const hint = `use a number with a unit: "90s", "20m", "1h30m"`
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.typeError(path, n, "a duration", hint)
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.errorAt(n, hint, "%s: bad duration %q", path, n.Value)
		return 0
	}
	if v <= 0 {
		d.errorAt(n, hint, "%s: duration must be positive, got %q", path, n.Value)
		return 0
	}
	return v
}

// strList decodes a list of strings; each item is checked by item.
func (d *decoder) strList(path string, n *yaml.Node, item func(path string, n *yaml.Node) string) []string {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.typeError(path, n, "a list", "")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		out = append(out, item(fmt.Sprintf("%s[%d]", path, i), c))
	}
	return out
}

// DerefYAML follows YAML aliases (*name) to the node they stand for. It is
// the task spec decoder's own helper, exported so that other strict spec
// decoders (the batch spec) resolve aliases the same way.
func DerefYAML(n *yaml.Node) *yaml.Node { return deref(n) }

// YAMLKindName describes a node's type for "expected X, got Y" messages
// ("a mapping", "a list", "a string", "null", ...), as task spec errors
// word it.
func YAMLKindName(n *yaml.Node) string { return kindName(n) }

// EditDistance is the Levenshtein distance between a and b, in runes, that
// the task spec loader uses to suggest a key for a typo.
func EditDistance(a, b string) int { return editDistance(a, b) }
