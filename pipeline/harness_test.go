package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// testRun is one Exec of a test, the harness the run builders share: a
// spec's YAML, a work tree, the scripted model's replies and options.
type testRun struct {
	spec    string          // the task spec's YAML, written to a temporary task.yaml
	repo    string          // the work tree
	replies []llmtest.Reply // the fake model's replies, in order
	pin     string          // sandbox layers pinned (sandbox.LayersEnv); "": every available one
	env     []string        // more of the runner's environment; PATH is always passed
	out     string          // the out dir; "": a temporary one
}

// testResult is what a testRun left.
type testResult struct {
	res    Result
	err    error
	srv    *llmtest.Server
	out    string
	stderr string
	recs   []event.Record // the log, valid against the schema and ending with run.finished
}

// exec runs c through Exec, quiet, with the test API key, and reads back
// the event log (a missing log ends the test).
func (c testRun) exec(t *testing.T) testResult {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, c.spec)
	r := testResult{srv: newModel(t, c.replies...), out: c.out}
	if r.out == "" {
		r.out = t.TempDir()
	}
	env := append([]string{"PATH=" + os.Getenv("PATH")}, c.env...)
	if c.pin != "" {
		env = append(env, sandbox.LayersEnv+"="+c.pin)
	}
	var stderr bytes.Buffer
	r.res, r.err = Exec(t.Context(), ExecOptions{Task: spec, Repo: c.repo, Out: r.out, BaseURL: r.srv.URL(), Quiet: true,
		APIKey: testKey, Stderr: &stderr, Environ: env})
	r.stderr = stderr.String()
	data, err := os.ReadFile(filepath.Join(r.out, "events.jsonl"))
	if err != nil {
		t.Fatalf("%v (%v)\n%s", err, r.err, r.stderr)
	}
	r.recs = validLog(t, data)
	return r
}

// file is the content of the out dir's file name ("" when missing).
func (r testResult) file(name string) string {
	data, _ := os.ReadFile(filepath.Join(r.out, name))
	return string(data)
}
