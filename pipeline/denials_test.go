package pipeline

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestGiveUpAfterDenialIsNotSuccess: in a spec without checks, a model
// whose last tool call was denied and that then answers (even claiming it
// did the work) ends failed with class blocked, exit 1, naming the denied
// call; a denial the agent worked around (a later call succeeded) is still
// a success.
func TestGiveUpAfterDenialIsNotSuccess(t *testing.T) {
	spec, repo := execFixture(t)
	// bash is offered (a rule allows ls), so rm is a denial.
	mustWrite(t, spec, strings.Replace(runSpec, "permissions:\n", "permissions:\n  bash: {\"ls\": allow}\n", 1))
	rm := llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"rm README"}`)}}.Reply()
	srv := newModel(t, rm, llmtest.Turn{Text: "Removed README."}.Reply())
	var buf bytes.Buffer
	res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "o"), BaseURL: srv.URL(),
		APIKey: testKey, Quiet: true, Stdout: &buf, Stderr: &buf})
	if ExitCode(err) != ExitTaskFailed || res.Status != event.StatusFailed || res.Error == nil ||
		res.Error.Class != event.ClassBlocked || !strings.Contains(res.Error.Message, "bash rm README") {
		t.Fatalf("gave up after a denial: exit %d, %+v (%v)", ExitCode(err), res, err)
	}

	// Worked around: the denied bash, then an allowed write.
	srv2 := newModel(t, rm, writeFileTurn("hello.txt", "hello\n"), llmtest.Turn{Text: "Wrote hello.txt instead."}.Reply())
	res, err = Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "o2"), BaseURL: srv2.URL(),
		APIKey: testKey, MaxSteps: 4, Quiet: true, Stdout: &buf, Stderr: &buf})
	if err != nil || res.Status != event.StatusSuccess || res.Denials != 1 {
		t.Fatalf("worked around the denial: %v %+v", err, res)
	}
}
