package spec

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// ResolveInputs checks the given inputs against the declared ones and fills
// in defaults: every given input must be declared, every required one
// given, and values must be in the enum when there is one. Inputs that are
// neither given nor defaulted are absent from the result (a template using
// them fails). All problems are reported at once, wrapping ErrInputs.
func (s *Spec) ResolveInputs(given map[string]string) (map[string]string, error) {
	declared := slices.Sorted(maps.Keys(s.Inputs))
	var problems []string
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if _, ok := s.Inputs[name]; !ok {
			hint := "declared: " + strings.Join(declared, ", ")
			if len(declared) == 0 {
				hint = "the task declares no inputs"
			} else if m := suggest(name, declared); m != "" {
				hint = fmt.Sprintf("did you mean %q?", m)
			}
			problems = append(problems, fmt.Sprintf("--set %s: unknown input (%s)", name, hint))
		}
	}
	for _, name := range declared {
		in := s.Inputs[name]
		v, ok := given[name]
		switch {
		case ok:
		case in.Default != nil:
			v, ok = *in.Default, true
		case in.Required:
			problems = append(problems, s.inputProblem(in, name, "input %q is required (set it with --set %s=VALUE)", name, name))
		}
		if ok && len(in.Enum) > 0 && !slices.Contains(in.Enum, v) {
			problems = append(problems, s.inputProblem(in, name, "input %q: %q is not allowed (allowed: %s)", name, v, strings.Join(in.Enum, ", ")))
			continue
		}
		if ok {
			out[name] = v
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w:\n%s", ErrInputs, strings.Join(problems, "\n"))
	}
	return out, nil
}

// inputProblem formats a problem with the input's declaration position.
func (s *Spec) inputProblem(in Input, name, format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	if in.pos.Line == 0 {
		return msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", s.Path, in.pos.Line, in.pos.Col, msg)
}

// Render resolves the inputs (see ResolveInputs) and renders the prompt
// with data, whose Inputs are replaced by the resolved inputs.
func (s *Spec) Render(inputs map[string]string, data TemplateData) (prompt string, err error) {
	resolved, err := s.ResolveInputs(inputs)
	if err != nil {
		return "", err
	}
	data.Inputs = resolved
	return s.RenderTemplate("prompt", s.Prompt, data)
}

// RenderTemplate renders one of the spec's templates (the prompt or a
// github.pull_request field, named by its key path, e.g.
// "github.pull_request.branch") with data. Errors wrap ErrInputs and name
// the field's position in the spec.
func (s *Spec) RenderTemplate(path, text string, data TemplateData) (string, error) {
	where := path
	if p, ok := s.pos[path]; ok {
		where = fmt.Sprintf("%s:%d:%d: %s", s.Path, p.Line, p.Col, path)
	}
	t, err := newTemplate(path, text)
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", where, ErrInputs, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		if m := unsetInput.FindStringSubmatch(err.Error()); m != nil {
			return "", fmt.Errorf("%s: %w: input %q is not set and has no default (set it with --set %s=VALUE)", where, ErrInputs, m[1], m[1])
		}
		return "", fmt.Errorf("%s: %w: %w", where, ErrInputs, err)
	}
	return b.String(), nil
}

// unsetInput matches text/template's error for an absent input.
var unsetInput = regexp.MustCompile(`at <\$?\.Inputs\.(\w+)>: map has no entry for key`)

// RenderPullRequest renders the templates of github.pull_request (branch,
// title and body; an empty body stays empty) with data, for the pull
// request of a run; nil when the spec asks for none. Errors are
// RenderTemplate's.
func (s *Spec) RenderPullRequest(data TemplateData) (*PullRequest, error) {
	pr := s.GitHub.PullRequest
	if pr == nil {
		return nil, nil
	}
	out := *pr
	for _, f := range []struct {
		key string
		dst *string
	}{{"branch", &out.Branch}, {"title", &out.Title}, {"body", &out.Body}} {
		if *f.dst == "" {
			continue
		}
		text, err := s.RenderTemplate("github.pull_request."+f.key, *f.dst, data)
		if err != nil {
			return nil, err
		}
		*f.dst = text
	}
	return &out, nil
}
