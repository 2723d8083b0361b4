package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/llm"
	"gopkg.in/yaml.v3"
)

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// inputs decodes "inputs": name → null or {description, required, default, enum}.
func (d *Decoder) inputs(path string, n *yaml.Node) map[string]Input {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(path, n, "a mapping of input names", "")
		return nil
	}
	out := map[string]Input{}
	for key, val := range d.Pairs(path, n) {
		p := joinPath(path, key.Value)
		if !identPattern.MatchString(key.Value) {
			d.ErrorAt(key, "start with a letter; use letters, digits and _, so that {{ .Inputs.NAME }} works", "%s: bad input name %q", path, key.Value)
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
func (d *Decoder) input(path string, n *yaml.Node, in Input) Input {
	var defNode *yaml.Node
	seen := d.Mapping(path, n, FieldFuncs{
		"description": func(p string, n *yaml.Node) { in.Description = d.Str(p, n) },
		"required":    func(p string, n *yaml.Node) { in.Required = d.Boolean(p, n) },
		"default": func(p string, n *yaml.Node) {
			if v, ok := d.ScalarText(p, n); ok {
				in.Default, defNode = &v, n
			}
		},
		"enum": func(p string, n *yaml.Node) { in.Enum = d.enum(p, n) },
	})
	if seen == nil {
		return in
	}
	if in.Required && in.Default != nil {
		d.ErrorAt(seen["required"], "remove required or the default", "%s: a required input cannot have a default", path)
	}
	if defNode != nil && len(in.Enum) > 0 && !slices.Contains(in.Enum, *in.Default) {
		d.ErrorAt(defNode, "allowed: "+strings.Join(in.Enum, ", "), "%s.default: %q is not one of the enum values", path, *in.Default)
	}
	return in
}

// enum decodes a non-empty list of distinct scalar values.
func (d *Decoder) enum(path string, n *yaml.Node) []string {
	n = deref(n)
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.TypeError(path, n, "a non-empty list", "")
		return nil
	}
	var out []string
	for i, c := range n.Content {
		v, ok := d.ScalarText(fmt.Sprintf("%s[%d]", path, i), c)
		if !ok {
			continue
		}
		if slices.Contains(out, v) {
			d.ErrorAt(c, "remove the duplicate", "%s[%d]: %q is listed twice", path, i, v)
		}
		out = append(out, v)
	}
	return out
}

// limits decodes "limits".
func (d *Decoder) limits(path string, n *yaml.Node) Limits {
	var l Limits
	d.Mapping(path, n, FieldFuncs{
		"max_steps":    func(p string, n *yaml.Node) { l.MaxSteps = int(d.Integer(p, n, 1)) },
		"max_cost_usd": func(p string, n *yaml.Node) { l.MaxCostUSD = d.Number(p, n) },
		"max_tokens":   func(p string, n *yaml.Node) { l.MaxTokens = d.Integer(p, n, 1) },
		"timeout":      func(p string, n *yaml.Node) { l.Timeout = d.Duration(p, n) },
		"tool_timeout": func(p string, n *yaml.Node) { l.ToolTimeout = d.Duration(p, n) },
		"max_denials":  func(p string, n *yaml.Node) { l.MaxDenials = int(d.Integer(p, n, 1)) },
		"total":        func(p string, n *yaml.Node) { l.Total = d.totalLimits(p, n) },
		"binary_patch_bytes": func(p string, n *yaml.Node) {
			l.BinaryPatchBytes = d.binaryPatchBytes(p, n)
		},
	})
	return l
}

// checks decodes "checks": a list of {name, run, timeout} with unique names.
func (d *Decoder) checks(path string, n *yaml.Node) []Check {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.TypeError(path, n, "a list of checks", "")
		return nil
	}
	out := make([]Check, 0, len(n.Content))
	names := map[string]bool{}
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		var c Check
		seen := d.Mapping(p, item, FieldFuncs{
			"name":    func(p string, n *yaml.Node) { c.Name = d.NonEmpty(p, n) },
			"run":     func(p string, n *yaml.Node) { c.Run = d.NonEmpty(p, n) },
			"timeout": func(p string, n *yaml.Node) { c.Timeout = d.Duration(p, n) },
		})
		d.Require(p, deref(item), seen, "name", "run")
		if c.Name != "" && names[c.Name] {
			d.ErrorAt(seen["name"], "give each check its own name", "%s.name: duplicate check name %q", p, c.Name)
		}
		names[c.Name] = true
		out = append(out, c)
	}
	return out
}

// github decodes "github"; tmpl decodes a string that is a template.
func (d *Decoder) github(path string, n *yaml.Node, tmpl func(string, *yaml.Node) string) GitHub {
	var g GitHub
	d.Mapping(path, n, FieldFuncs{
		"comment":  func(p string, n *yaml.Node) { g.Comment = d.Boolean(p, n) },
		"continue": func(p string, n *yaml.Node) { g.Continue = d.Boolean(p, n) },
		"review":   func(p string, n *yaml.Node) { g.Review = d.review(p, n) },
		"pull_request": func(p string, n *yaml.Node) {
			pr := &PullRequest{}
			seen := d.Mapping(p, n, FieldFuncs{
				"branch": func(p string, n *yaml.Node) { pr.Branch = tmpl(p, n) },
				"title":  func(p string, n *yaml.Node) { pr.Title = tmpl(p, n) },
				"body":   func(p string, n *yaml.Node) { pr.Body = tmpl(p, n) },
				"draft":  func(p string, n *yaml.Node) { pr.Draft = d.Boolean(p, n) },
				"labels": func(p string, n *yaml.Node) { pr.Labels = d.StrList(p, n, d.NonEmpty) },
			})
			d.Require(p, deref(n), seen, "branch", "title")
			g.PullRequest = pr
		},
	})
	return g
}

// models decodes "models": model name → catalog override.
func (d *Decoder) models(path string, n *yaml.Node) map[string]ModelOverride {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(path, n, "a mapping of model names", "")
		return nil
	}
	out := map[string]ModelOverride{}
	price := func(p string, n *yaml.Node) *float64 { v := d.Number(p, n); return &v }
	for key, val := range d.Pairs(path, n) {
		var m ModelOverride
		p := joinPath(path, key.Value)
		d.Mapping(p, val, FieldFuncs{
			"context_window":                 func(p string, n *yaml.Node) { m.ContextWindow = int(d.Integer(p, n, 1)) },
			"max_output":                     func(p string, n *yaml.Node) { m.MaxOutput = int(d.Integer(p, n, 1)) },
			"input_price_per_million":        func(p string, n *yaml.Node) { m.InputPrice = price(p, n) },
			"cached_input_price_per_million": func(p string, n *yaml.Node) { m.CachedInputPrice = price(p, n) },
			"output_price_per_million":       func(p string, n *yaml.Node) { m.OutputPrice = price(p, n) },
			"wires":                          func(p string, n *yaml.Node) { m.Wires = d.wires(p, n) },
		})
		out[key.Value] = m
	}
	return out
}

// wires decodes a model's "wires": a non-empty list of distinct wire names.
func (d *Decoder) wires(path string, n *yaml.Node) []llm.Wire {
	seen := map[string]bool{}
	names := d.StrList(path, n, func(p string, n *yaml.Node) string {
		s := d.Str(p, n)
		switch {
		case deref(n).ShortTag() != "!!str":
		case !slices.Contains(llm.WireNames(), s):
			d.ErrorAt(n, "one of: "+strings.Join(llm.WireNames(), ", "), "%s: unknown wire %q", p, s)
		case seen[s]:
			d.ErrorAt(n, "remove the duplicate", "%s: %q is listed twice", p, s)
		}
		seen[s] = true
		return s
	})
	if len(names) == 0 {
		d.ErrorAt(n, "name at least one wire, e.g. [responses]", "%s: empty list", path)
		return nil
	}
	out := make([]llm.Wire, len(names))
	for i, s := range names {
		out[i] = llm.Wire(s)
	}
	return out
}

// env decodes "env": a list of distinct environment variable names.
func (d *Decoder) env(path string, n *yaml.Node) []string {
	seen := map[string]bool{}
	return d.StrList(path, n, func(p string, n *yaml.Node) string {
		s := d.Str(p, n)
		switch {
		case !isString(n):
		case !identPattern.MatchString(s):
			d.ErrorAt(n, "a name such as GOFLAGS, not NAME=value", "%s: bad environment variable name %q", p, s)
		case seen[s]:
			d.ErrorAt(n, "remove the duplicate", "%s: %q is listed twice", p, s)
		}
		seen[s] = true
		return s
	})
}
