package github

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestActionKeepsJobVariables: an input left empty keeps the variable the
// job sets (a step's env would replace it with ""); a given input wins.
func TestActionKeepsJobVariables(t *testing.T) {
	t.Parallel()
	job := map[string]string{"OPENAI_API_KEY": "sk-job", "ANTHROPIC_API_KEY": "sk-ant-job",
		"OPENAI_BASE_URL": "http://job.example/v1", "RUNNER_MODEL": "job-model"}
	tests := []struct {
		name   string
		inputs map[string]string
		want   map[string]string
	}{
		{"inputs empty", map[string]string{}, job},
		{"inputs given", map[string]string{"api-key": "sk-in", "anthropic-api-key": "sk-ant-in", "base-url": "http://in.example/v1", "model": "in-model"},
			map[string]string{"OPENAI_API_KEY": "sk-in", "ANTHROPIC_API_KEY": "sk-ant-in", "OPENAI_BASE_URL": "http://in.example/v1", "RUNNER_MODEL": "in-model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := eventEnv(t, "workflow_dispatch", "workflow_dispatch.json", "")
			for k, v := range job {
				base[k] = v
			}
			tt.inputs["task"] = "t.yaml"
			r := newActionRun(t, tt.inputs, base)
			r.runAll(fakeGoDir(t))
			if r.failed {
				t.Fatal("a step failed")
			}
			var rec record
			readJSONFile(t, filepath.Join(r.temp, "exec.json"), &rec)
			for k, v := range tt.want {
				if rec.Env[k] != v {
					t.Errorf("the runner got %s=%q, want %q", k, rec.Env[k], v)
				}
			}
			for k := range rec.Env {
				if strings.HasPrefix(k, "RUNNER_INPUT_") {
					t.Errorf("the runner got %s", k)
				}
			}
		})
	}
}

// TestActionBooleanInputs: comment and pull-request take YAML 1.2's
// booleans in any case; another value fails the step with an annotation
// naming the input, before the runner starts.
func TestActionBooleanInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input, value, want string // want "": refused
	}{
		{"pull-request", "true", "true"},
		{"pull-request", "True", "true"},
		{"pull-request", "FALSE", "false"},
		{"pull-request", "", ""},
		{"pull-request", "yes", "refused"},
		{"pull-request", "1", "refused"},
		{"pull-request", "on", "refused"},
		{"comment", "TRUE", "true"},
		{"comment", "no", "refused"},
	}
	env := map[string]string{"pull-request": "RUNNER_PULL_REQUEST", "comment": "RUNNER_COMMENT"}
	for _, tt := range tests {
		t.Run(tt.input+"="+tt.value, func(t *testing.T) {
			t.Parallel()
			r := newActionRun(t, map[string]string{"task": "t.yaml", tt.input: tt.value},
				eventEnv(t, "workflow_dispatch", "workflow_dispatch.json", ""))
			r.runAll(fakeGoDir(t))
			var rec record
			if tt.want == "refused" {
				want := `::error title=runner::the ` + tt.input + ` input is "` + tt.value + `": use true or false`
				if !r.failed || !strings.Contains(r.log.String(), want) {
					t.Errorf("not refused with %q:\n%s", want, r.log.String())
				}
				if got := r.actionOutputs(); got["status"] != "error" || got["exit-code"] != "2" {
					t.Errorf("outputs %v, want status error, exit-code 2", got)
				}
				return
			}
			if r.failed {
				t.Fatalf("a step failed:\n%s", r.log.String())
			}
			readJSONFile(t, filepath.Join(r.temp, "exec.json"), &rec)
			if got := rec.Env[env[tt.input]]; got != tt.want {
				t.Errorf("%s = %q, want %q", env[tt.input], got, tt.want)
			}
		})
	}
}

// TestActionPromptNeedsModel: an inline prompt without the model input
// fails naming that input, unless the job sets RUNNER_MODEL.
func TestActionPromptNeedsModel(t *testing.T) {
	t.Parallel()
	r := newActionRun(t, map[string]string{"prompt": "hi"}, eventEnv(t, "schedule", "schedule.json", ""))
	r.runAll(fakeGoDir(t))
	if want := "::error title=runner::the prompt input needs a model: set the model input"; !r.failed || !strings.Contains(r.log.String(), want) {
		t.Errorf("not refused with %q:\n%s", want, r.log.String())
	}
	base := eventEnv(t, "schedule", "schedule.json", "")
	base["RUNNER_MODEL"] = "job-model"
	r = newActionRun(t, map[string]string{"prompt": "hi"}, base)
	r.runAll(fakeGoDir(t))
	if r.failed {
		t.Errorf("RUNNER_MODEL from the job was not enough:\n%s", r.log.String())
	}
}
