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
// them fails). All problems are reported at once, wrapping ErrInputs, in
// the words of --set (InputProblems gives them as data, for batch specs).
func (s *Spec) ResolveInputs(given map[string]string) (map[string]string, error) {
	if problems := s.InputProblems(given); len(problems) > 0 {
		lines := make([]string, len(problems))
		for i, p := range problems {
			switch p.Kind {
			case InputUnknown:
				lines[i] = fmt.Sprintf("--set %s: unknown input (%s)", p.Name, p.Hint)
			case InputRequired:
				lines[i] = s.inputProblem(p, "input %q is required (set it with --set %s=VALUE)", p.Name, p.Name)
			default:
				lines[i] = s.inputProblem(p, "input %q: %q is not allowed (allowed: %s)", p.Name, p.Value, strings.Join(p.Allowed, ", "))
			}
		}
		return nil, fmt.Errorf("%w:\n%s", ErrInputs, strings.Join(lines, "\n"))
	}
	out := map[string]string{}
	for name, in := range s.Inputs {
		if v, ok := given[name]; ok {
			out[name] = v
		} else if in.Default != nil {
			out[name] = *in.Default
		}
	}
	return out, nil
}

// InputProblemKind says what is wrong with one input.
type InputProblemKind int

// The kinds of InputProblem.
const (
	InputUnknown    InputProblemKind = iota + 1 // given, but the task declares no such input
	InputRequired                               // required, with no default, and not given
	InputNotAllowed                             // its value (given or the default) is not in the enum
)

// InputProblem is one problem of the inputs given to a task (see
// InputProblems).
type InputProblem struct {
	Name string
	Kind InputProblemKind
	// Hint, for InputUnknown: "declared: a, b", `did you mean "a"?` or
	// "the task declares no inputs".
	Hint string
	// Value and Allowed, for InputNotAllowed: the value and the enum.
	Value   string
	Allowed []string
	// Decl is where the input is declared in the spec file ("file:line:col");
	// "" for an unknown input.
	Decl string
}

// InputProblems checks the given inputs against the declared ones, as
// ResolveInputs does, and returns every problem: unknown inputs first
// (sorted by name), then the declared ones (sorted) that are missing or
// have a value outside their enum. nil means the inputs are fine.
func (s *Spec) InputProblems(given map[string]string) []InputProblem {
	declared := slices.Sorted(maps.Keys(s.Inputs))
	var out []InputProblem
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if _, ok := s.Inputs[name]; !ok {
			hint := "declared: " + strings.Join(declared, ", ")
			if len(declared) == 0 {
				hint = "the task declares no inputs"
			} else if m := suggest(name, declared); m != "" {
				hint = fmt.Sprintf("did you mean %q?", m)
			}
			out = append(out, InputProblem{Name: name, Kind: InputUnknown, Hint: hint})
		}
	}
	for _, name := range declared {
		in := s.Inputs[name]
		v, ok := given[name]
		if !ok && in.Default != nil {
			v, ok = *in.Default, true
		}
		switch {
		case !ok && in.Required:
			out = append(out, InputProblem{Name: name, Kind: InputRequired, Decl: s.declPos(in)})
		case ok && len(in.Enum) > 0 && !slices.Contains(in.Enum, v):
			out = append(out, InputProblem{Name: name, Kind: InputNotAllowed, Value: v, Allowed: in.Enum, Decl: s.declPos(in)})
		}
	}
	return out
}

// declPos is where the input is declared, "file:line:col"; "" when unknown.
func (s *Spec) declPos(in Input) string {
	if in.pos.Line == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", s.Path, in.pos.Line, in.pos.Col)
}

// inputProblem formats a problem with the input's declaration position.
func (s *Spec) inputProblem(p InputProblem, format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	if p.Decl == "" {
		return msg
	}
	return p.Decl + ": " + msg
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
	if data.Event != nil {
		data.Event, _ = nullsEmpty(data.Event).(map[string]any)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		if m := unsetInput.FindStringSubmatch(err.Error()); m != nil {
			return "", fmt.Errorf("%s: %w: input %q is not set and has no default (set it with --set %s=VALUE)", where, ErrInputs, m[1], m[1])
		}
		if m := notObject.FindStringSubmatch(err.Error()); m != nil {
			return "", fmt.Errorf("%s: %w: %s is null or text in this event's payload, so it has no field %s "+
				"(GitHub sends null for some, such as pull_request.head.repo of a deleted fork); guard it: {{ with %s }}{{ .%s }}{{ end }}",
				where, ErrInputs, m[1], m[2], m[1], m[2])
		}
		return "", fmt.Errorf("%s: %w: %w", where, ErrInputs, err)
	}
	return b.String(), nil
}

var (
	// unsetInput matches text/template's error for an absent input.
	unsetInput = regexp.MustCompile(`at <\$?\.Inputs\.(\w+)>: map has no entry for key`)
	// notObject matches its error for a field of a payload value that
	// is no object (a null, made "" by nullsEmpty, or a string).
	notObject = regexp.MustCompile(`at <(\.Event[\w.]*)\.(\w+)>: can't evaluate field \w+ in type (?:string|interface \{\})`)
)

// nullsEmpty copies a decoded JSON value with every null made "": a
// template prints a null as "<no value>", and GitHub sends null for an
// empty issue or pull request body.
func nullsEmpty(v any) any {
	switch v := v.(type) {
	case nil:
		return ""
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = nullsEmpty(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = nullsEmpty(e)
		}
		return out
	}
	return v
}

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
