package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// withoutToken is env minus GITHUB_TOKEN and GH_TOKEN.
func withoutToken(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GITHUB_TOKEN=") && !strings.HasPrefix(kv, "GH_TOKEN=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestExecSpecErrorUnderActions: an invalid spec under Actions is an
// ::error annotation on its file, line and column (relative to the
// workspace), the outputs say status error and exit code 2, and the error
// is marked reported so the CLI prints no second line.
func TestExecSpecErrorUnderActions(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, runSpec+"colour: blue\n")
	env, outputs, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`, "GITHUB_WORKSPACE="+filepath.Dir(spec))
	var stderr bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), Environ: env, Stderr: &stderr,
		APIKey: "sk-unit-0123456789abcdef"})
	if ExitCode(err) != ExitUsage {
		t.Fatalf("exit %d (%v), want 2", ExitCode(err), err)
	}
	var exit *ExitError
	if !errors.As(err, &exit) || !exit.Reported {
		t.Errorf("error %v not marked reported", err)
	}
	if !strings.Contains(stderr.String(), "::error file=task.yaml,line=11,col=1,title=runner%3A invalid task spec::unknown key \"colour\"") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if out := outputsMap(t, outputs); out["status"] != "error" || out["exit-code"] != "2" || out["denials"] != "0" || out["denials-json"] != "[]" || len(out) != len(github.OutputNames()) {
		t.Errorf("outputs %v", out)
	}
}

// TestExecUsageErrorUnderActions: the action's prompt input without a
// model (no model anywhere) is a usage error: an ::error annotation, and
// the outputs status error, exit code 2; no model call.
func TestExecUsageErrorUnderActions(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, "version: 1\nname: inline\nprompt: |2-\n  Say hi.\npermissions:\n  read: allow\n")
	env, outputs, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`)
	var stderr bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), Environ: env, Stderr: &stderr,
		APIKey: "sk-unit-0123456789abcdef"})
	if ExitCode(err) != ExitUsage {
		t.Fatalf("exit %d (%v), want 2", ExitCode(err), err)
	}
	if !strings.Contains(stderr.String(), "::error title=runner::") || !strings.Contains(stderr.String(), "no model") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if out := outputsMap(t, outputs); out["status"] != "error" || out["exit-code"] != "2" {
		t.Errorf("outputs %v", out)
	}
}

// TestExecNoToken: on a fork's pull request event that asks for a comment
// and a pull request, without a token the runner makes no API call at all
// (the fake API answers none), warns once, and the run is otherwise
// unaffected: success, exit 0, outputs written. The same event from the
// repository's own branch is refused: its author's access cannot be read.
func TestExecNoToken(t *testing.T) {
	own := newDeliveryRun(t, true)
	own.env = withoutToken(own.env)
	if err := own.exec(t); err != nil {
		t.Fatal(err)
	}
	if out := outputsMap(t, own.outputs); out["status"] != "refused" || !strings.Contains(own.stderr.String(), "no GITHUB_TOKEN") {
		t.Errorf("same-repository pull request without a token: outputs %v\n%s", out, own.stderr.String())
	}
	d := newDeliveryRun(t, true)
	d.env = withoutToken(d.env)
	for _, kv := range d.env {
		if path, ok := strings.CutPrefix(kv, "GITHUB_EVENT_PATH="); ok {
			fork := strings.Replace(prEvent, `"full_name":"octo/hello"`, `"full_name":"alice/hello"`, 1)
			if err := os.WriteFile(path, []byte(fork), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.exec(t); err != nil {
		t.Fatal(err)
	}
	out := outputsMap(t, d.outputs)
	if out["status"] != "success" || out["exit-code"] != "0" || out["comment-url"] != "" || out["pr-url"] != "" {
		t.Errorf("outputs %v", out)
	}
	if n := strings.Count(d.stderr.String(), "::warning title=runner%3A no token::"); n != 1 {
		t.Errorf("%d no-token warnings, want 1:\n%s", n, d.stderr.String())
	}
	if _, err := os.Stat(d.summary); err != nil {
		t.Errorf("no step summary: %v", err)
	}
}

// TestExecNoTokenGatedEvent: a comment event cannot have its actor's
// write access checked without a token: the run is refused (fail closed),
// with no API call and no model call.
func TestExecNoTokenGatedEvent(t *testing.T) {
	spec, repo := execFixture(t)
	payload := `{"action":"created","issue":{"number":5,"title":"x"},"comment":{"id":1,"body":"@runner go",` +
		`"user":{"login":"alice","type":"User"}},"sender":{"login":"alice","type":"User"}}`
	env, outputs, _ := actionsEnv(t, "issue_comment", payload)
	srv := newModel(t)
	var stderr bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Stderr: &stderr,
		APIKey: "sk-unit-0123456789abcdef", Environ: withoutToken(env)})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != 0 {
		t.Error("the model was called")
	}
	if out := outputsMap(t, outputs); out["status"] != "refused" {
		t.Errorf("outputs %v", out)
	}
	if !strings.Contains(stderr.String(), "no GITHUB_TOKEN to check alice's write access") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestExecMasksSecretsFirst: under Actions the first lines on stderr mask
// the provider key and the token, before anything else is printed.
func TestExecMasksSecretsFirst(t *testing.T) {
	spec, repo := execFixture(t)
	env, _, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`, "MY_SERVICE_PASSWORD=hunter2-hunter2")
	srv := newModel(t, llmtest.Turn{Text: "ok"}.Reply())
	var stderr bytes.Buffer
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Stderr: &stderr,
		APIKey: "sk-unit-0123456789abcdef", Environ: env}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(stderr.String(), "\n")
	want := []string{"::add-mask::sk-unit-0123456789abcdef", "::add-mask::ghs_0123456789abcdefghijklmnopqrstuvwx",
		"::add-mask::hunter2-hunter2"}
	if len(lines) < 3 || strings.Join(lines[:3], "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr starts:\n%s", strings.Join(lines[:min(5, len(lines))], "\n"))
	}
}

// TestExecFailedCheckAnnotated: a check still failing at the end is an
// ::error annotation naming it.
func TestExecFailedCheckAnnotated(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, runSpec+"checks:\n  - name: tests\n    run: exit 1\n")
	env, outputs, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`)
	srv := newModel(t, llmtest.Turn{Text: "done"}.Reply())
	var stderr bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Stderr: &stderr,
		APIKey: "sk-unit-0123456789abcdef", Environ: env})
	if ExitCode(err) != ExitTaskFailed {
		t.Fatalf("exit %d (%v)", ExitCode(err), err)
	}
	if !strings.Contains(stderr.String(), "::error title=runner%3A check tests::check tests failed (exit 1): exit 1") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if out := outputsMap(t, outputs); out["status"] != "failed" || out["exit-code"] != "1" {
		t.Errorf("outputs %v", out)
	}
}

// TestExecStructuredOutputOnStdout: a task with an output schema prints
// its structured output on stdout as one JSON document (so `| jq .verdict`
// works) and writes it as the structured-output step output.
func TestExecStructuredOutputOnStdout(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, runSpec+"output:\n  schema:\n    type: object\n    required: [verdict]\n    properties:\n      verdict: {type: string}\n")
	env, outputs, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`)
	srv := newModel(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("StructuredOutput", `{"verdict":"request_changes"}`)}}.Reply())
	var stdout bytes.Buffer
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
		Stdout: &stdout, APIKey: "sk-unit-0123456789abcdef", Environ: env}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc["verdict"] != "request_changes" {
		t.Errorf("stdout %q is not the structured output (%v)", stdout.String(), err)
	}
	if out := outputsMap(t, outputs); out["structured-output"] != `{"verdict":"request_changes"}` {
		t.Errorf("outputs %v", out)
	}
}
