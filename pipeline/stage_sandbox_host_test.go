package pipeline

import (
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestRunStartedRecordsHostSetup: what the action's AppArmor step said
// (RUNNER_SANDBOX_HOST_SETUP) is run.started's sandbox.host_setup, on one
// line, and the log still matches the schema.
func TestRunStartedRecordsHostSetup(t *testing.T) {
	spec, repo := execFixture(t)
	said := "AppArmor profile runner-userns-0123456789ab not loaded (no sudo);\ncommands run under Landlock only"
	run := testRun{specFile: spec, repo: repo, replies: []llmtest.Reply{llmtest.Turn{Text: "Done."}.Reply()},
		env: []string{sandbox.HostSetupEnv + "=" + said}}.exec(t)
	if run.err != nil {
		t.Fatal(run.err)
	}
	var started event.RunStarted
	if err := run.recs[0].Decode(&started); err != nil {
		t.Fatal(err)
	}
	want := "AppArmor profile runner-userns-0123456789ab not loaded (no sudo); commands run under Landlock only"
	if started.Sandbox == nil || started.Sandbox.HostSetup != want {
		t.Errorf("run.started sandbox = %+v, want host_setup %q", started.Sandbox, want)
	}
}
