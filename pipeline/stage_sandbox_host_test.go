package pipeline

import (
	"os"
	"path/filepath"
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
	srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
	out := t.TempDir()
	said := "AppArmor profile runner-userns-0123456789ab not loaded (no sudo);\ncommands run under Landlock only"
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Environ: []string{"PATH=" + os.Getenv("PATH"), sandbox.HostSetupEnv + "=" + said}}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var started event.RunStarted
	if err := validLog(t, data)[0].Decode(&started); err != nil {
		t.Fatal(err)
	}
	want := "AppArmor profile runner-userns-0123456789ab not loaded (no sudo); commands run under Landlock only"
	if started.Sandbox == nil || started.Sandbox.HostSetup != want {
		t.Errorf("run.started sandbox = %+v, want host_setup %q", started.Sandbox, want)
	}
}
