package spec

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Decoder is the positioned YAML decoder of the task spec, shared with the
// batch spec (pipeline/batch): it walks a yaml.v3 node tree and collects
// every problem as an Error with its file, line and column instead of
// stopping at the first one. Paths name a value by its dotted keys
// ("limits.timeout", "repos[2].id"); "" is the document's top level.
type Decoder struct {
	file  string
	noun  string // what the file holds, for messages: "task" or "batch"
	src   []byte
	lines []string // src split into lines, on first use
	errs  Errors
	pos   map[string]Pos
	// typoed holds the paths an unknown key's "did you mean" named, so
	// Require does not report them missing a second time.
	typoed map[string]bool
}

// NewDecoder returns a Decoder for src, read from file (the name messages
// carry); noun says what the file holds ("task", "batch") and names its top
// level in messages ("unknown key \"x\" in the batch spec").
func NewDecoder(file, noun string, src []byte) *Decoder {
	return &Decoder{file: file, noun: noun, src: src, pos: map[string]Pos{}, typoed: map[string]bool{}}
}

// Err returns the problems found so far, ordered by file, line and column
// without duplicates, or nil when there are none.
func (d *Decoder) Err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return d.errs.sorted()
}

// Add records a problem found outside the YAML tree (a line of a file the
// spec names); its File may differ from the decoder's.
func (d *Decoder) Add(e *Error) { d.errs = append(d.errs, e) }

// File is the name the decoder's messages carry.
func (d *Decoder) File() string { return d.file }

// FieldFuncs maps the keys of a mapping to the functions decoding their
// values; path is the key's dotted path ("limits.timeout").
type FieldFuncs map[string]func(path string, n *yaml.Node)

func posOf(n *yaml.Node) Pos { return Pos{Line: max(n.Line, 1), Col: max(n.Column, 1)} }

// ErrorAt records a problem at the node's position: the message is
// format with args, hint says what to do ("" for nothing).
func (d *Decoder) ErrorAt(n *yaml.Node, hint, format string, args ...any) {
	d.ErrorAtPos(posOf(n), hint, format, args...)
}

// ErrorAtPos records a problem at a position.
func (d *Decoder) ErrorAtPos(p Pos, hint, format string, args ...any) {
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

// TypeError records "path: expected want, got <n's kind>".
func (d *Decoder) TypeError(path string, n *yaml.Node, want, hint string) {
	d.ErrorAt(n, hint, "%s: expected %s, got %s", path, want, kindName(n))
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// Mapping decodes the mapping n at path: known keys go to their functions,
// unknown and duplicate keys are errors. It returns the value nodes by key,
// or nil when n is not a mapping.
func (d *Decoder) Mapping(path string, n *yaml.Node, fields FieldFuncs) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(d.displayPath(path), n, "a mapping", "")
		return nil
	}
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	seen := map[string]*yaml.Node{}
	for key, val := range d.Pairs(path, n) {
		fn, ok := fields[key.Value]
		if !ok {
			d.ErrorAt(key, unknownKeyHint(key.Value, known), "unknown key %q in %s", key.Value, d.displayPath(path))
			if s := suggest(key.Value, known); s != "" {
				d.typoed[joinPath(path, s)] = true
			}
			continue
		}
		seen[key.Value] = val
		p := joinPath(path, key.Value)
		d.pos[p] = posOf(val)
		fn(p, val)
	}
	return seen
}

// Pairs yields the key and value nodes of a mapping, reporting non-string,
// merge and duplicate keys.
func (d *Decoder) Pairs(path string, n *yaml.Node) func(yield func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		dup := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := deref(n.Content[i]), deref(n.Content[i+1])
			switch {
			case key.Kind != yaml.ScalarNode:
				d.ErrorAt(key, "keys are plain names", "%s: a key must be a string, got %s", d.displayPath(path), kindName(key))
				continue
			case key.ShortTag() == "!!merge":
				d.ErrorAt(key, "write the keys out", "%s: merge keys (<<) are not supported", d.displayPath(path))
				continue
			case dup[key.Value]:
				d.ErrorAt(key, "remove one of them", "duplicate key %q in %s", key.Value, d.displayPath(path))
				continue
			}
			dup[key.Value] = true
			if !yield(key, val) {
				return
			}
		}
	}
}

// displayPath names a path in messages: "" is "the task spec" (or the
// decoder's noun).
func (d *Decoder) displayPath(path string) string {
	if path == "" {
		return "the " + d.noun + " spec"
	}
	return path
}

// Require reports the keys of required missing from seen, at the mapping.
// A key an unknown key's "did you mean" already named ("promt") is not
// reported again.
func (d *Decoder) Require(path string, n *yaml.Node, seen map[string]*yaml.Node, required ...string) {
	if seen == nil {
		return
	}
	for _, k := range required {
		if _, ok := seen[k]; !ok && !d.typoed[joinPath(path, k)] {
			d.ErrorAt(n, fmt.Sprintf("add %q", k+": ..."), "%s: missing required key %q", d.displayPath(path), k)
		}
	}
}

// isString reports whether n is a string scalar. A YAML 1.1 timestamp
// (2024-01-01) counts: YAML 1.2, which editors follow, has no timestamp
// type, so the spec's JSON Schema sees a string there.
func isString(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!str" || n.ShortTag() == "!!timestamp")
}

// Str decodes a string scalar.
func (d *Decoder) Str(path string, n *yaml.Node) string {
	n = deref(n)
	if !isString(n) {
		hint := ""
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
			hint = fmt.Sprintf("quote it: %q", n.Value)
		}
		d.TypeError(path, n, "a string", hint)
		return ""
	}
	return n.Value
}

// NonEmpty decodes a string that must not be blank.
func (d *Decoder) NonEmpty(path string, n *yaml.Node) string {
	s := d.Str(path, n)
	if isString(n) && strings.TrimSpace(s) == "" {
		d.ErrorAt(n, "give it a value or remove the key", "%s: must not be empty", path)
	}
	return s
}

// ScalarText decodes any scalar (string, number, boolean) as its text, for
// input values where `default: 3` means "3".
func (d *Decoder) ScalarText(path string, n *yaml.Node) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.TypeError(path, n, "a string", "")
		return "", false
	}
	return n.Value, true
}

// Integer decodes an integer that is at least lo and at most
// math.MaxInt32; 0 after an error.
func (d *Decoder) Integer(path string, n *yaml.Node, lo int64) int64 {
	v, _ := d.integer(path, n, lo)
	return v
}

// integer is Integer that also says whether n was a valid integer. A
// number with no fraction (1.0, 1e3) is one, as in JSON Schema: the
// spec's schema and editors cannot tell 1.0 from 1.
func (d *Decoder) integer(path string, n *yaml.Node, lo int64) (int64, bool) {
	n = deref(n)
	v, ok := int64(0), false
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int":
			ok = n.Decode(&v) == nil
		case "!!float":
			var f float64
			if n.Decode(&f) == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				v, ok = int64(f), true
			}
		}
	}
	if !ok {
		d.TypeError(path, n, "an integer", "")
		return 0, false
	}
	if v < lo {
		d.ErrorAt(n, "", "%s: must be at least %d, got %d", path, lo, v)
		return 0, false
	}
	if v > math.MaxInt32 {
		d.ErrorAt(n, "", "%s: %s is too large (at most %d)", path, n.Value, math.MaxInt32)
		return 0, false
	}
	return v, true
}

// Number decodes a non-negative finite number.
func (d *Decoder) Number(path string, n *yaml.Node) float64 {
	n = deref(n)
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&v) != nil {
		d.TypeError(path, n, "a number", "")
		return 0
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		d.ErrorAt(n, "", "%s: must be a finite number ≥ 0, got %s", path, n.Value)
		return 0
	}
	return v
}

// Boolean decodes true or false.
func (d *Decoder) Boolean(path string, n *yaml.Node) bool {
	n = deref(n)
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.TypeError(path, n, "true or false", "")
		return false
	}
	return v
}

// Duration decodes a positive Go duration string such as "90s" or "20m".
func (d *Decoder) Duration(path string, n *yaml.Node) time.Duration {
	n = deref(n)
	const hint = `use a number with a unit: "90s", "20m", "1h30m"`
	if !isString(n) {
		d.TypeError(path, n, "a duration", hint)
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.ErrorAt(n, hint, "%s: bad duration %q", path, n.Value)
		return 0
	}
	if v <= 0 {
		d.ErrorAt(n, hint, "%s: duration must be positive, got %q", path, n.Value)
		return 0
	}
	return v
}

// StrList decodes a list of strings; each item is checked by item.
func (d *Decoder) StrList(path string, n *yaml.Node, item func(path string, n *yaml.Node) string) []string {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.TypeError(path, n, "a list", "")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		out = append(out, item(fmt.Sprintf("%s[%d]", path, i), c))
	}
	return out
}

// Fields decodes the mapping n at path like Mapping, for the keys given,
// and returns their value nodes (aliases followed) by key; nil when n is
// not a mapping.
func (d *Decoder) Fields(path string, n *yaml.Node, keys ...string) map[string]*yaml.Node {
	fields := make(FieldFuncs, len(keys))
	for _, k := range keys {
		fields[k] = func(string, *yaml.Node) {}
	}
	return d.Mapping(path, n, fields)
}

// StringMap decodes a mapping of scalars as strings; numbers and booleans
// are kept as written ("3", "true"), as for task inputs.
func (d *Decoder) StringMap(path string, n *yaml.Node) map[string]string {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(d.displayPath(path), n, "a mapping", "")
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for key, val := range d.Pairs(path, n) {
		if v, ok := d.ScalarText(joinPath(path, key.Value), val); ok {
			out[key.Value] = v
		}
	}
	return out
}

// Deref follows YAML aliases (*name) to the node they stand for.
func Deref(n *yaml.Node) *yaml.Node { return deref(n) }

// Suggest returns the candidate closest to word (a likely typo of it), or
// "" when none is close.
func Suggest(word string, candidates []string) string { return suggest(word, candidates) }
