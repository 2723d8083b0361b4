package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/internal/golden"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// generatedDocs maps each generated section of the docs to its page.
var generatedDocs = []struct{ name, page string }{
	{"flags", "../../docs/cli.md"},
	{"spec", "../../docs/spec.md"},
	{"events", "../../docs/events.md"},
}

// TestGeneratedDocs keeps the generated sections of docs/ (flag reference,
// spec reference) equal to what the code says; -update rewrites them.
func TestGeneratedDocs(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	bodies := map[string]string{"flags": flagReference(t), "spec": specReference(t), "events": eventsReference(t)}
	for _, g := range generatedDocs {
		data, err := os.ReadFile(g.page)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(data)
		want := replaceSection(t, g.page, doc, g.name, bodies[g.name])
		if want == doc {
			continue
		}
		if golden.Update() {
			if err := os.WriteFile(g.page, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is stale; run: go test ./cmd/runner -run TestGeneratedDocs -update\n%s", g.page, cmp.Diff(doc, want))
	}
}

// replaceSection replaces the text between the section's markers.
func replaceSection(t *testing.T, page, doc, name, body string) string {
	t.Helper()
	begin, end := "<!-- BEGIN GENERATED: "+name+" -->\n", "<!-- END GENERATED: "+name+" -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q", page, begin, end)
	}
	return doc[:i+len(begin)] + body + doc[j:]
}

// flagReference is the help of the root and of every visible leaf
// command, walked from the kong model, so a new command or flag is in
// it; it fails when a visible flag is missing from its command's help.
func flagReference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, n := range visibleCommands(t) {
		if n.Parent != nil && slices.ContainsFunc(n.Children, func(c *kong.Node) bool { return c.Type == kong.CommandNode }) {
			continue // a group such as "batch": its commands have the flags
		}
		cmd := commandWords(n)
		var stdout, stderr bytes.Buffer
		args := append(slices.Clone(cmd), "--help")
		code := runCLI(context.Background(), args, Streams{Stdout: &stdout, Stderr: &stderr}, nil)
		if code != 0 || stderr.Len() > 0 {
			t.Fatalf("runner %v: exit %d, stderr %q", args, code, stderr.String())
		}
		for _, f := range n.Flags {
			if !f.Hidden && !strings.Contains(stdout.String(), "--"+f.Name) {
				t.Errorf("runner %v lacks the flag --%s", args, f.Name)
			}
		}
		fmt.Fprintf(&b, "### `%s`\n\n```text\n%s```\n\n", strings.Join(append([]string{"runner"}, cmd...), " "), stdout.String())
	}
	return b.String()
}

// specReference is a table of every key of the task spec, from its JSON
// Schema, in the schema file's order.
func specReference(t *testing.T) string {
	t.Helper()
	v, err := decodeOrdered(json.NewDecoder(bytes.NewReader(spec.TaskSchema())))
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := v.(*object)
	defs := schema.obj("$defs")
	var b strings.Builder
	b.WriteString("| Key | Type | Required | Description |\n|---|---|---|---|\n")
	writeRows(&b, "", schema, defs)
	b.WriteString("\n")
	return b.String()
}

// object is a JSON object that remembers its key order.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) obj(key string) *object {
	if o == nil {
		return nil
	}
	v, _ := o.vals[key].(*object)
	return v
}

func (o *object) str(key string) string {
	if o == nil {
		return ""
	}
	v, _ := o.vals[key].(string)
	return v
}

func (o *object) list(key string) []any {
	if o == nil {
		return nil
	}
	v, _ := o.vals[key].([]any)
	return v
}

// decodeOrdered decodes one JSON value, objects as *object.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k.(string))
			o.vals[k.(string)] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		var l []any
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token()
		return l, err
	}
	return tok, nil
}

// writeRows writes one row per property of an object schema, depth first.
func writeRows(b *strings.Builder, prefix string, s, defs *object) {
	props := s.obj("properties")
	if props == nil {
		return
	}
	required := s.list("required")
	for _, name := range props.keys {
		p := props.obj(name)
		key := prefix + name
		req := ""
		if slices.Contains(required, any(name)) {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", key, typeOf(p), req, describe(p, defs))
		writeRows(b, key+".", p, defs)
		for _, alt := range alternatives(p.obj("additionalProperties")) {
			writeRows(b, key+".NAME.", alt, defs)
		}
		writeRows(b, key+"[].", p.obj("items"), defs)
	}
}

// alternatives are the branches of an anyOf, or the schema itself.
func alternatives(s *object) []*object {
	alts := s.list("anyOf")
	if len(alts) == 0 {
		return []*object{s}
	}
	var out []*object
	for _, a := range alts {
		if o, ok := a.(*object); ok {
			out = append(out, o)
		}
	}
	return out
}

var refName = regexp.MustCompile(`^#/\$defs/(\w+)$`)

// typeOf describes a property's type for people.
func typeOf(p *object) string {
	if m := refName.FindStringSubmatch(p.str("$ref")); m != nil {
		switch m[1] {
		case "duration":
			return "duration"
		case "rules", "pathRules", "mcpRules":
			return "`allow`, `deny` or {pattern: action}"
		}
	}
	if c, ok := p.vals["const"]; ok {
		return fmt.Sprintf("`%v`", c)
	}
	switch t := p.vals["type"].(type) {
	case string:
		switch {
		case t == "object" && p.obj("additionalProperties") != nil:
			return "map"
		case t == "array" && p.obj("items").str("type") != "" && p.obj("items").str("type") != "object":
			return "list of " + p.obj("items").str("type") + "s"
		case t == "array":
			return "list"
		}
		return t
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

// describe is the property's description, or its definition's.
func describe(p, defs *object) string {
	d := p.str("description")
	if m := refName.FindStringSubmatch(p.str("$ref")); d == "" && m != nil {
		d = defs.obj(m[1]).str("description")
	}
	return strings.ReplaceAll(d, "|", `\|`)
}
