package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/llm"
)

// MaxSize is the largest task spec file Load reads, in bytes.
const MaxSize = 1 << 20

// Load reads and validates the task spec at path. Every problem found is
// returned at once as Errors (which matches ErrInvalidSpec); a file that
// cannot be read is an error wrapping ErrRead.
func Load(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRead, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrRead, path, err)
	}
	return LoadBytes(path, data)
}

// LoadBytes parses and validates a task spec; name is the file name used in
// error messages and stored in Spec.Path.
func LoadBytes(name string, data []byte) (*Spec, error) {
	s, err := LoadPartial(name, data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// LoadPartial is LoadBytes that also returns what decoded of a spec with
// errors, so that checks of its other parts (validate's budget check) can
// run in the same pass. The spec is nil only when the file is no YAML
// document; a key in error holds its zero value.
func LoadPartial(name string, data []byte) (*Spec, error) {
	d := NewDecoder(name, "task", data)
	if len(data) > MaxSize {
		d.ErrorAtPos(Pos{1, 1}, "", "the task spec is larger than %d bytes", MaxSize)
		return nil, d.errs.sorted()
	}
	root := d.Document()
	if root == nil {
		return nil, d.errs.sorted()
	}
	s := d.spec(root)
	s.Path = name
	s.pos = d.pos
	if len(d.errs) > 0 {
		return s, d.errs.sorted()
	}
	return s, nil
}

// Document parses the decoder's source as exactly one YAML document and
// returns its root node, or nil after recording an error.
func (d *Decoder) Document() *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(d.src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.ErrorAtPos(Pos{1, 1}, `start with "version: 1"`, "the %s spec is empty", d.noun)
		} else {
			d.yamlError(err)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		d.ErrorAt(&extra, "put one "+d.noun+" in each file", "the file holds more than one YAML document")
		return nil
	case !errors.Is(err, io.EOF):
		d.yamlError(err)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		d.ErrorAtPos(Pos{1, 1}, `start with "version: 1"`, "the %s spec is empty", d.noun)
		return nil
	}
	return doc.Content[0]
}

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError records a YAML syntax error. yaml.v3 reports lines only, and
// for parser errors ("did not find expected …") the 0-based line of the
// construct the error is in, hence the +1. A tab in the indentation is
// reported on the line of the scalar before it ("violates indentation") or
// on no line at all, so the tab itself is looked for (tabPos).
func (d *Decoder) yamlError(err error) {
	p, msg := Pos{1, 1}, err.Error()
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		if line, convErr := strconv.Atoi(m[1]); convErr == nil {
			if strings.HasPrefix(m[2], "did not find expected") {
				line++
			}
			p.Line = max(line, 1)
		}
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if t, ok := d.tabPos(p.Line, msg); ok {
		p = t
	}
	d.ErrorAtPos(p, "fix the YAML syntax", "YAML: %s", msg)
}

// tabPos finds the tab a YAML error is about: for a tab error, the first
// tab in the indentation of the reported line or the two after it; for a
// character that cannot start a token, a tab in the reported line's
// indentation. ok is false when there is none.
func (d *Decoder) tabPos(line int, msg string) (Pos, bool) {
	last := line
	switch {
	case strings.Contains(msg, "tab character"):
		last = line + 2
	case !strings.Contains(msg, "cannot start any token"):
		return Pos{}, false
	}
	for l := line; l <= last; l++ {
		text, ok := d.srcLine(l)
		if !ok {
			break
		}
		indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
		if i := strings.IndexByte(indent, '\t'); i >= 0 {
			return Pos{Line: l, Col: i + 1}, true
		}
	}
	return Pos{}, false
}

// templateField is a string value to check as a template once the inputs
// are known.
type templateField struct {
	path string
	node *yaml.Node
}

// spec decodes the root mapping.
func (d *Decoder) spec(root *yaml.Node) *Spec {
	s := &Spec{}
	var templates []templateField
	tmpl := func(p string, n *yaml.Node) string {
		templates = append(templates, templateField{p, deref(n)})
		return d.NonEmpty(p, n)
	}
	seen := d.Mapping("", root, FieldFuncs{
		"version":     func(p string, n *yaml.Node) { s.Version = d.version(p, n) },
		"name":        func(p string, n *yaml.Node) { s.Name = d.name(p, n) },
		"description": func(p string, n *yaml.Node) { s.Description = d.Str(p, n) },
		"model":       func(p string, n *yaml.Node) { s.Model = d.NonEmpty(p, n) },
		"reasoning_effort": func(p string, n *yaml.Node) {
			s.ReasoningEffort = d.oneOf(p, n, llm.ReasoningEfforts())
		},
		"instructions": func(p string, n *yaml.Node) { s.Instructions = d.Str(p, n) },
		"repo_instructions": func(p string, n *yaml.Node) {
			v := d.Boolean(p, n)
			s.RepoInstructions = &v
		},
		"prompt":      func(p string, n *yaml.Node) { s.Prompt = tmpl(p, n) },
		"inputs":      func(p string, n *yaml.Node) { s.Inputs = d.inputs(p, n) },
		"permissions": func(p string, n *yaml.Node) { s.Permissions = d.permissions(p, n) },
		"limits":      func(p string, n *yaml.Node) { s.Limits = d.limits(p, n) },
		"checks":      func(p string, n *yaml.Node) { s.Checks = d.checks(p, n) },
		"retries":     func(p string, n *yaml.Node) { s.Retries = int(d.Integer(p, n, 0)) },
		"output":      func(p string, n *yaml.Node) { s.Output = d.output(p, n) },
		"github":      func(p string, n *yaml.Node) { s.GitHub = d.github(p, n, tmpl) },
		"models":      func(p string, n *yaml.Node) { s.Models = d.models(p, n) },
		"env":         func(p string, n *yaml.Node) { s.Env = d.env(p, n) },
		"mcp":         func(p string, n *yaml.Node) { s.MCP = d.mcpSection(p, n) },
		"sandbox":     func(p string, n *yaml.Node) { s.Sandbox = d.sandbox(p, n) },
		"provider":    func(p string, n *yaml.Node) { s.Provider = d.provider(p, n) },
	})
	d.checkMCPRules(s)
	d.checkReview(s)
	d.Require("", root, seen, "version", "name", "prompt")
	for _, t := range templates {
		if isString(t.node) {
			d.checkTemplate(t.path, t.node, s.Inputs)
		}
	}
	return s
}

// version decodes "version", which must be Version.
func (d *Decoder) version(path string, n *yaml.Node) int {
	v, ok := d.integer(path, n, 0)
	if ok && v != Version {
		d.ErrorAt(n, fmt.Sprintf("this runner reads version %d", Version), "%s: unsupported spec version %s", path, deref(n).Value)
	}
	return int(v)
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// name decodes the task name.
func (d *Decoder) name(path string, n *yaml.Node) string {
	s := d.Str(path, n)
	if isString(n) && !namePattern.MatchString(s) {
		d.ErrorAt(n, `use letters, digits, ".", "_" and "-", at most 64, e.g. "fix-tests"`, "%s: bad task name %q", path, s)
	}
	return s
}
