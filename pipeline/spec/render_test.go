package spec

import (
	"errors"
	"strings"
	"testing"
)

const renderSpec = `version: 1
name: r
prompt: |
  Fix {{ .Inputs.pkg }} in {{ .Inputs.mode }} mode{{ if .Inputs.note }}: {{ .Inputs.note }}{{ end }}.
inputs:
  pkg: {required: true}
  mode: {default: fast, enum: [fast, slow]}
  note: {default: ""}
  opt: {}
github:
  pull_request: {branch: "fix/{{ .GitHub.Number }}", title: "{{ .Event.action }}"}
`

func TestRender(t *testing.T) {
	s, err := LoadBytes("r.yaml", []byte(renderSpec))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		inputs  map[string]string
		want    string
		wantErr []string
	}{
		{"defaults", map[string]string{"pkg": "./a"}, "Fix ./a in fast mode.\n", nil},
		{"all given", map[string]string{"pkg": "./a", "mode": "slow", "note": "careful"}, "Fix ./a in slow mode: careful.\n", nil},
		{"missing required", map[string]string{}, "", []string{`r.yaml:6:3: input "pkg" is required (set it with --set pkg=VALUE)`}},
		{"not in enum", map[string]string{"pkg": "x", "mode": "medium"}, "", []string{`r.yaml:7:3: input "mode": "medium" is not allowed (allowed: fast, slow)`}},
		{"unknown input", map[string]string{"pkg": "x", "mdoe": "slow"}, "", []string{`--set mdoe: unknown input (did you mean "mode"?)`}},
		{"all problems at once", map[string]string{"zzz": "1", "mode": "x"}, "", []string{"--set zzz: unknown input", `input "mode"`, `input "pkg" is required`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Render(tt.inputs, TemplateData{})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("Render = %q, want %q", got, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrInputs) {
				t.Fatalf("Render error = %v, want ErrInputs", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestRenderMissingKey(t *testing.T) {
	s, err := LoadBytes("r.yaml", []byte(renderSpec))
	if err != nil {
		t.Fatal(err)
	}
	// An input declared without default and not given is absent: using it fails.
	s.Prompt = "{{ .Inputs.opt }}"
	if _, err := s.Render(map[string]string{"pkg": "x"}, TemplateData{}); !errors.Is(err, ErrInputs) || !strings.Contains(err.Error(), `r.yaml:3:9: prompt: invalid task inputs: input "opt" is not set and has no default (set it with --set opt=VALUE)`) {
		t.Errorf("Render(absent input) = %v", err)
	}
	pr := s.GitHub.PullRequest
	_, err = s.RenderTemplate("github.pull_request.branch", pr.Branch, TemplateData{GitHub: map[string]any{"repository": "o/r"}})
	if !errors.Is(err, ErrInputs) || !strings.HasPrefix(err.Error(), "r.yaml:11:26: github.pull_request.branch: ") {
		t.Errorf("RenderTemplate(missing .GitHub.Number) = %v", err)
	}
	got, err := s.RenderTemplate("github.pull_request.title", pr.Title, TemplateData{Event: map[string]any{"action": "opened"}})
	if err != nil || got != "opened" {
		t.Errorf("RenderTemplate(title) = %q, %v", got, err)
	}
}

// TestRenderNulls: a payload's nulls (an issue without a body, a pull
// request from a deleted fork) render as "", not "<no value>"; a field of
// a null object fails naming the key and how to guard it.
func TestRenderNulls(t *testing.T) {
	s, err := LoadBytes("r.yaml", []byte(renderSpec))
	if err != nil {
		t.Fatal(err)
	}
	event := map[string]any{"issue": map[string]any{"title": "t", "body": nil, "labels": []any{nil}},
		"pull_request": map[string]any{"head": map[string]any{"repo": nil}}}
	for text, want := range map[string]string{
		"[{{ .Event.issue.body }}]":                                                            "[]",
		"{{ range .Event.issue.labels }}[{{ . }}]{{ end }}":                                    "[]",
		"[{{ with .Event.pull_request.head.repo }}{{ .full_name }}{{ else }}deleted{{ end }}]": "[deleted]",
	} {
		got, err := s.RenderTemplate("prompt", text, TemplateData{Event: event})
		if err != nil || got != want {
			t.Errorf("RenderTemplate(%s) = %q, %v; want %q", text, got, err, want)
		}
	}
	_, err = s.RenderTemplate("prompt", "{{ .Event.pull_request.head.repo.full_name }}", TemplateData{Event: event})
	want := ".Event.pull_request.head.repo is null or text in this event's payload, so it has no field full_name"
	if !errors.Is(err, ErrInputs) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "{{ with .Event.pull_request.head.repo }}") {
		t.Errorf("field of a null object: %v, want %q", err, want)
	}
	if event["issue"].(map[string]any)["body"] != nil {
		t.Error("the caller's payload was changed")
	}
}
