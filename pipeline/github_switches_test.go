package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestExecGitHubSwitches: RUNNER_COMMENT and RUNNER_PULL_REQUEST take
// true or false in any case; "yes" or "1" is refused before any model
// call, naming the variable and the action's input.
func TestExecGitHubSwitches(t *testing.T) {
	tests := []struct {
		kv, want string // want "": the run goes on
	}{
		{"RUNNER_PULL_REQUEST=yes", `RUNNER_PULL_REQUEST is "yes" (the action's pull-request input): use true or false`},
		{"RUNNER_PULL_REQUEST=1", `RUNNER_PULL_REQUEST is "1"`},
		{"RUNNER_COMMENT=on", `RUNNER_COMMENT is "on" (the action's comment input)`},
		{"RUNNER_PULL_REQUEST=FALSE", ""},
		{"RUNNER_COMMENT=False", ""},
	}
	for _, tt := range tests {
		t.Run(tt.kv, func(t *testing.T) {
			spec, repo := execFixture(t)
			env, _, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`, tt.kv)
			srv := newModel(t, llmtest.Turn{Text: "Nothing to write."}.Reply())
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
				APIKey: "sk-unit-0123456789abcdef", Environ: env})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a usage error with %q", err, tt.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model calls, want none", n)
			}
		})
	}
}

// TestGitHubSwitchCase: the switches read true and false in any case.
func TestGitHubSwitchCase(t *testing.T) {
	for v, want := range map[string][2]bool{"TRUE": {true, true}, "True": {true, true}, "false": {false, true}, "": {false, false}, "yes": {false, false}} {
		r := &execRun{opts: ExecOptions{Environ: []string{"RUNNER_PULL_REQUEST=" + v}}}
		if on, set := r.githubSwitch("RUNNER_PULL_REQUEST"); on != want[0] || set != want[1] {
			t.Errorf("%q: on %v set %v, want %v", v, on, set, want)
		}
	}
}

// TestExecNoModelInActions: in Actions the missing model's error names
// the action's model input.
func TestExecNoModelInActions(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, "version: 1\nname: t\nprompt: p\npermissions: {read: allow}\n")
	env, _, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`)
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), Quiet: true, Environ: env})
	if want := "set model in the task spec or the action's model input (RUNNER_MODEL)"; !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
