package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// inputs decodes "inputs": name → null or {description, required, default, enum}.
func (d *decoder) inputs(path string, n *yaml.Node) map[string]Input {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.typeError(path, n, "a mapping of input names", "")
		return nil
	}
	out := map[string]Input{}
	for key, val := range d.pairs(path, n) {
		p := joinPath(path, key.Value)
		if !identPattern.MatchString(key.Value) {
			d.errorAt(key, "start with a letter; use letters, digits and _, so that {{ .Inputs.NAME }} works", "%s: bad input name %q", path, key.Value)
			continue
		}
		d.pos[p] = posOf(key)
		in := Input{pos: posOf(key)}
		if val.ShortTag() != "!!null" {
			in = d.input(p, val, in)
		}
		out[key.Value] = in
	}
	return out
}

// input decodes one input declaration.
func (d *decoder) input(path string, n *yaml.Node, in Input) Input {
	var defNode *yaml.Node
	seen := d.mapping(path, n, fieldFuncs{
		"description": func(p string, n *yaml.Node) { in.Description = d.str(p, n) },
		"required":    func(p string, n *yaml.Node) { in.Required = d.boolean(p, n) },
		"default": func(p string, n *yaml.Node) {
			if v, ok := d.scalarText(p, n); ok {
				in.Default, defNode = &v, n
			}
		},
		"enum": func(p string, n *yaml.Node) { in.Enum = d.enum(p, n) },
	})
	if seen == nil {
		return in
	}
	if in.Required && in.Default != nil {
		d.errorAt(seen["required"], "remove required or the default", "%s: a required input cannot have a default", path)
	}
	if defNode != nil && len(in.Enum) > 0 && !slices.Contains(in.Enum, *in.Default) {
		d.errorAt(defNode, "allowed: "+strings.Join(in.Enum, ", "), "%s.default: %q is not one of the enum values", path, *in.Default)
	}
	return in
}

// enum decodes a non-empty list of distinct scalar values.
func (d *decoder) enum(path string, n *yaml.Node) []string {
	n = deref(n)
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.typeError(path, n, "a non-empty list", "")
		return nil
	}
	var out []string
	for i, c := range n.Content {
		v, ok := d.scalarText(fmt.Sprintf("%s[%d]", path, i), c)
		if !ok {
			continue
		}
		if slices.Contains(out, v) {
			d.errorAt(c, "remove the duplicate", "%s[%d]: %q is listed twice", path, i, v)
		}
		out = append(out, v)
	}
	return out
}

// limits decodes "limits".
func (d *decoder) limits(path string, n *yaml.Node) Limits {
	var l Limits
	d.mapping(path, n, fieldFuncs{
		"max_steps":    func(p string, n *yaml.Node) { l.MaxSteps = int(d.integer(p, n, 1)) },
		"max_cost_usd": func(p string, n *yaml.Node) { l.MaxCostUSD = d.number(p, n) },
		"max_tokens":   func(p string, n *yaml.Node) { l.MaxTokens = d.integer(p, n, 1) },
		"timeout":      func(p string, n *yaml.Node) { l.Timeout = d.duration(p, n) },
		"tool_timeout": func(p string, n *yaml.Node) { l.ToolTimeout = d.duration(p, n) },
		"max_denials":  func(p string, n *yaml.Node) { l.MaxDenials = int(d.integer(p, n, 1)) },
	})
	return l
}

// checks decodes "checks": a list of {name, run, timeout} with unique names.
func (d *decoder) checks(path string, n *yaml.Node) []Check {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.typeError(path, n, "a list of checks", "")
		return nil
	}
	out := make([]Check, 0, len(n.Content))
	names := map[string]bool{}
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		var c Check
		seen := d.mapping(p, item, fieldFuncs{
			"name":    func(p string, n *yaml.Node) { c.Name = d.nonEmpty(p, n) },
			"run":     func(p string, n *yaml.Node) { c.Run = d.nonEmpty(p, n) },
			"timeout": func(p string, n *yaml.Node) { c.Timeout = d.duration(p, n) },
		})
		d.require(p, deref(item), seen, "name", "run")
		if c.Name != "" && names[c.Name] {
			d.errorAt(seen["name"], "give each check its own name", "%s.name: duplicate check name %q", p, c.Name)
		}
		names[c.Name] = true
		out = append(out, c)
	}
	return out
}

// github decodes "github"; tmpl decodes a string that is a template.
func (d *decoder) github(path string, n *yaml.Node, tmpl func(string, *yaml.Node) string) GitHub {
	var g GitHub
	d.mapping(path, n, fieldFuncs{
		"comment": func(p string, n *yaml.Node) { g.Comment = d.boolean(p, n) },
		"pull_request": func(p string, n *yaml.Node) {
			pr := &PullRequest{}
			seen := d.mapping(p, n, fieldFuncs{
				"branch": func(p string, n *yaml.Node) { pr.Branch = tmpl(p, n) },
				"title":  func(p string, n *yaml.Node) { pr.Title = tmpl(p, n) },
				"body":   func(p string, n *yaml.Node) { pr.Body = tmpl(p, n) },
				"draft":  func(p string, n *yaml.Node) { pr.Draft = d.boolean(p, n) },
				"labels": func(p string, n *yaml.Node) { pr.Labels = d.strList(p, n, d.nonEmpty) },
			})
			d.require(p, deref(n), seen, "branch", "title")
			g.PullRequest = pr
		},
	})
	return g
}

// models decodes "models": model name → catalog override.
func (d *decoder) models(path string, n *yaml.Node) map[string]ModelOverride {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.typeError(path, n, "a mapping of model names", "")
		return nil
	}
	out := map[string]ModelOverride{}
	price := func(p string, n *yaml.Node) *float64 { v := d.number(p, n); return &v }
	for key, val := range d.pairs(path, n) {
		var m ModelOverride
		p := joinPath(path, key.Value)
		d.mapping(p, val, fieldFuncs{
			"context_window":                 func(p string, n *yaml.Node) { m.ContextWindow = int(d.integer(p, n, 1)) },
			"max_output":                     func(p string, n *yaml.Node) { m.MaxOutput = int(d.integer(p, n, 1)) },
			"input_price_per_million":        func(p string, n *yaml.Node) { m.InputPrice = price(p, n) },
			"cached_input_price_per_million": func(p string, n *yaml.Node) { m.CachedInputPrice = price(p, n) },
			"output_price_per_million":       func(p string, n *yaml.Node) { m.OutputPrice = price(p, n) },
		})
		out[key.Value] = m
	}
	return out
}

// env decodes "env": a list of distinct environment variable names.
func (d *decoder) env(path string, n *yaml.Node) []string {
	seen := map[string]bool{}
	return d.strList(path, n, func(p string, n *yaml.Node) string {
		s := d.str(p, n)
		switch {
		case deref(n).ShortTag() != "!!str":
		case !identPattern.MatchString(s):
			d.errorAt(n, "a name such as GOFLAGS, not NAME=value", "%s: bad environment variable name %q", p, s)
		case seen[s]:
			d.errorAt(n, "remove the duplicate", "%s: %q is listed twice", p, s)
		}
		seen[s] = true
		return s
	})
}
