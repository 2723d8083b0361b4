package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"gopkg.in/yaml.v3"
)

// Bounds on an output schema written in YAML (aliases can multiply nodes).
const (
	maxSchemaNodes = 10000
	maxSchemaDepth = 64
)

// output decodes "output".
func (d *Decoder) output(path string, n *yaml.Node) Output {
	var o Output
	d.Mapping(path, n, FieldFuncs{
		"schema": func(p string, n *yaml.Node) { o.Schema = d.outputSchema(p, n) },
	})
	return o
}

// outputSchema converts a YAML mapping to a JSON Schema and compiles it.
func (d *Decoder) outputSchema(path string, n *yaml.Node) map[string]any {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(path, n, "a JSON Schema object", `e.g. {type: object, properties: {...}}`)
		return nil
	}
	budget := maxSchemaNodes
	v, ok := d.toJSON(path, n, &budget, 0)
	if !ok {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		d.ErrorAt(n, "", "%s: %v", path, err)
		return nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		d.ErrorAt(n, "", "%s: %v", path, err)
		return nil
	}
	if _, err := CompileSchema(schema); err != nil {
		d.schemaError(path, n, err)
		return nil
	}
	return schema
}

// toJSON converts a YAML node to a JSON-compatible value.
func (d *Decoder) toJSON(path string, n *yaml.Node, budget *int, depth int) (any, bool) {
	n = deref(n)
	*budget--
	if *budget < 0 || depth > maxSchemaDepth {
		root, _, _ := strings.Cut(path, "/")
		d.ErrorAt(n, "simplify the schema", "%s: schema is too large or too deeply nested", root)
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for key, val := range d.Pairs(path, n) {
			v, ok := d.toJSON(path+"/"+key.Value, val, budget, depth+1)
			if !ok {
				return nil, false
			}
			m[key.Value] = v
		}
		return m, true
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, ok := d.toJSON(path+"/"+strconv.Itoa(i), c, budget, depth+1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
		}
		return l, true
	}
	return d.scalarJSON(path, n)
}

// scalarJSON converts a YAML scalar to a JSON value.
func (d *Decoder) scalarJSON(path string, n *yaml.Node) (any, bool) {
	switch n.ShortTag() {
	case "!!null":
		return nil, true
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b, true
		}
	case "!!int", "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, true
		}
		d.ErrorAt(n, "JSON numbers are finite", "%s: %q is not a JSON number", path, n.Value)
		return nil, false
	default:
		return n.Value, true
	}
	d.ErrorAt(n, "", "%s: cannot read %q", path, n.Value)
	return nil, false
}

// schemaError records the compile errors of the output schema, each at the
// part of the schema it is about when the compiler says where: every
// problem, not only the first (schemaLeaves).
func (d *Decoder) schemaError(path string, n *yaml.Node, err error) {
	const hint = "the output schema must be a valid JSON Schema (draft 2020-12)"
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		d.ErrorAt(n, hint, "%s: %v", path, err)
		return
	}
	for _, leaf := range schemaLeaves(ve, nil) {
		at := nodeAt(n, leaf.InstanceLocation)
		msg := (&jsonschema.ValidationError{InstanceLocation: leaf.InstanceLocation, ErrorKind: leaf.ErrorKind}).Error()
		if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "at ") && i > 0 {
			msg = msg[i+2:]
		}
		where := path
		if len(leaf.InstanceLocation) > 0 {
			where += "/" + strings.Join(leaf.InstanceLocation, "/")
		}
		d.ErrorAt(at, hint, "%s: %s", where, msg)
	}
}

// schemaLeaves appends the problems of a metaschema validation error to
// out: its leaves, each branch of an allOf (every part of the schema
// checked) followed, but of an anyOf or oneOf only the first alternative
// (`type: objekt` is "must be one of 'array', …", not also "want array").
func schemaLeaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(ve.Causes) > 0 {
			return schemaLeaves(ve.Causes[0], out)
		}
	}
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = schemaLeaves(c, out)
	}
	return out
}

// nodeAt follows a JSON pointer (as tokens) into a YAML node, stopping at
// the deepest node found.
func nodeAt(n *yaml.Node, tokens []string) *yaml.Node {
	for _, tok := range tokens {
		n = deref(n)
		next := (*yaml.Node)(nil)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// noLoader refuses to load any schema resource: an output schema must be
// self-contained (no network, no files).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("cannot load %q: an output schema must be self-contained", url)
}

// CompileSchema compiles a JSON Schema given as encoding/json values (as in
// Output.Schema), without loading any external resource, for validating
// structured output.
func CompileSchema(schema map[string]any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const url = "mem:///output.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return sch, nil
}
