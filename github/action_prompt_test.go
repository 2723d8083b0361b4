package github_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// prepScript is the run script of the action's prep step.
func prepScript(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	for _, s := range a.Runs.Steps {
		if s.ID == "prep" {
			return s.Run
		}
	}
	t.Fatal("no prep step")
	return ""
}

// TestActionPromptIsLiteral runs the prep step on prompts holding template
// delimiters and renders the generated task with the pipeline: the prompt
// comes back unchanged, never parsed as a template.
func TestActionPromptIsLiteral(t *testing.T) {
	script := prepScript(t)
	tests := []struct{ name, prompt string }{
		{"field", "Number {{ .GitHub.Number }} and {{.Inputs.x}}"},
		{"unterminated", "start {{ if and never end"},
		{"braces", "{{{x}}} {{- trim -}} }} { {{"},
		{"escaped already", "{{\"{{\"}} and {{`raw`}}"},
		{"comment", "{{/* c */}} `back` ``ticks``"},
		{"actions expression", "token ${{ github.token }}\n  indented {{\n\nend {"},
		{"plain", "no delimiters at all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			temp := t.TempDir()
			out := filepath.Join(temp, "output")
			cmd := exec.CommandContext(t.Context(), "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "RUNNER_TEMP=" + temp, "GITHUB_OUTPUT=" + out,
				"RUNNER_TASK=", "RUNNER_PROMPT=" + tt.prompt, "RUNNER_INPUT_MODEL=m1", "RUNNER_INPUT_COMMENT=", "RUNNER_INPUT_PULL_REQUEST="}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("prep: %v: %s", err, stderr.String())
			}
			outputs, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(outputs), "\n")
			dir, ok := strings.CutPrefix(first, "dir=")
			if !ok {
				t.Fatalf("prep outputs %q", outputs)
			}
			path := filepath.Join(dir, "prompt-input.yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			task, err := spec.LoadBytes(path, data)
			if err != nil {
				t.Fatalf("generated task does not load: %v\n%s", err, data)
			}
			got, err := task.Render(nil, spec.TemplateData{})
			if err != nil {
				t.Fatalf("render: %v\n%s", err, data)
			}
			if got != tt.prompt {
				t.Errorf("prompt = %q, want %q\nfile:\n%s", got, tt.prompt, data)
			}
		})
	}
}
