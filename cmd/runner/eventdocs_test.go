package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// eventsReference documents the event log from schema/events.schema.json:
// the envelope, then each event type in the schema's order with its
// fields, fields of shared definitions spelled out (tokens.input).
func eventsReference(t *testing.T) string {
	t.Helper()
	f, err := os.Open("../../schema/events.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := decodeOrdered(json.NewDecoder(f))
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := v.(*object)
	defs := schema.obj("$defs")
	var b strings.Builder
	b.WriteString("### Envelope\n\nEvery line has these fields, then its type's.\n\n")
	writeEventFields(&b, schema, defs)
	types := schema.obj("properties").obj("type").list("enum")
	for _, a := range schema.list("allOf") {
		o, _ := a.(*object)
		ty := o.obj("if").obj("properties").obj("type").vals["const"]
		if !slices.Contains(types, ty) {
			t.Errorf("schema/events.schema.json: allOf describes type %v, which the type enum lacks", ty)
		}
	}
	for _, ty := range types {
		name, _ := ty.(string)
		def := defs.obj(name)
		if def == nil {
			t.Errorf("schema/events.schema.json: type %q has no $defs entry", name)
			continue
		}
		fmt.Fprintf(&b, "### `%s`\n\n", name)
		if d := def.str("description"); d != "" {
			b.WriteString(d + "\n\n")
		}
		if def.obj("properties") == nil || len(def.obj("properties").keys) == 0 {
			b.WriteString("No fields beyond the envelope.\n\n")
			continue
		}
		writeEventFields(&b, def, defs)
	}
	return b.String()
}

// writeEventFields writes one table of an object schema's fields.
func writeEventFields(b *strings.Builder, s, defs *object) {
	b.WriteString("| Field | Type | Required | Description |\n|---|---|---|---|\n")
	writeEventRows(b, "", s, defs, 0)
	b.WriteString("\n")
}

// writeEventRows writes a row per property, depth first, following $ref
// into the shared definitions (at most four levels deep).
func writeEventRows(b *strings.Builder, prefix string, s, defs *object, depth int) {
	if depth > 4 {
		return
	}
	s = resolveRef(s, defs)
	props := s.obj("properties")
	if props == nil {
		return
	}
	required := s.list("required")
	for _, name := range props.keys {
		p := props.obj(name)
		r := resolveRef(p, defs)
		req := ""
		for _, x := range required {
			if x == name {
				req = "yes"
			}
		}
		desc := p.str("description")
		if desc == "" {
			desc = r.str("description")
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", prefix+name, eventType(r, defs), req, cell(desc))
		writeEventRows(b, prefix+name+".", r, defs, depth+1)
		if items := r.obj("items"); items != nil {
			writeEventRows(b, prefix+name+"[].", items, defs, depth+1)
		}
	}
}

// resolveRef returns the definition a {"$ref": "#/$defs/NAME"} names, or s.
func resolveRef(s, defs *object) *object {
	if name, ok := strings.CutPrefix(s.str("$ref"), "#/$defs/"); ok && defs.obj(name) != nil {
		return defs.obj(name)
	}
	return s
}

// eventType describes a field's type for people: a const, an enum's
// values, a type or a list of them, "list of T".
func eventType(p, defs *object) string {
	if c, ok := p.vals["const"]; ok {
		return fmt.Sprintf("`%v`", c)
	}
	if e := p.list("enum"); len(e) > 0 {
		vals := make([]string, len(e))
		for i, x := range e {
			vals[i] = fmt.Sprintf("`%v`", x)
		}
		return strings.Join(vals, ", ")
	}
	if p.vals["type"] == "array" {
		if t := eventType(resolveRef(p.obj("items"), defs), defs); t != "" {
			return "list of " + t
		}
		return "list"
	}
	if alts := p.list("anyOf"); len(alts) > 0 {
		var parts []string
		for _, a := range alts {
			if o, ok := a.(*object); ok {
				parts = append(parts, eventType(resolveRef(o, defs), defs))
			}
		}
		return strings.Join(parts, " or ")
	}
	return typeOf(p)
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
