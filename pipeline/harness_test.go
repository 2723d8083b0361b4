package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// testRun is one Exec of a test, the harness the run builders share: a
// spec's YAML, a work tree, the scripted model's replies and options.
type testRun struct {
	spec     string          // the task spec's YAML, written to a temporary task.yaml
	specFile string          // a task spec already written (in the work tree, say); overrides spec
	repo     string          // the work tree
	replies  []llmtest.Reply // the fake model's replies, in order
	srv      *llmtest.Server // a model shared with other runs; nil: one serving replies
	pin      string          // sandbox layers pinned (sandbox.LayersEnv); "": every available one
	env      []string        // more of the runner's environment; PATH is always passed
	out      string          // the out dir; "": a temporary one
	noLog    bool            // the run may stop before it writes a log (a refused --continue): recs stay nil
	ctx      context.Context // the run's context, one the test may cancel; nil: t.Context()
	// opts sets what else the run needs (Isolate, Telemetry, Quiet off),
	// after the harness set its options.
	opts func(*ExecOptions)
}

// sandboxed is c under pin: the layers pinned, or for "off" the spec's
// sandbox mode off (c.spec must be set) and no layers pinned.
func (c testRun) sandboxed(pin string) testRun {
	if pin == "off" {
		c.spec += "sandbox: {mode: off}\n"
		c.pin = ""
		return c
	}
	c.pin = pin
	return c
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
// the event log (a missing log ends the test unless c.noLog).
func (c testRun) exec(t *testing.T) testResult {
	t.Helper()
	r, o, stderr := c.prepare(t)
	r.res, r.err = Exec(c.runContext(t), o)
	return c.finish(t, r, stderr)
}

// execWithin is exec with a deadline: a run still going after d fails the
// test with hang, from the test's goroutine.
//   - Exec runs in a goroutine of its own, left behind if it hangs.
func (c testRun) execWithin(t *testing.T, d time.Duration, hang string) testResult {
	t.Helper()
	r, o, stderr := c.prepare(t)
	ctx := c.runContext(t)
	done := make(chan testResult, 1)
	go func() {
		var e testResult
		e.res, e.err = Exec(ctx, o)
		done <- e
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case e := <-done:
		r.res, r.err = e.res, e.err
	case <-timer.C:
		t.Fatalf("%s (still running after %v)", hang, d)
	}
	return c.finish(t, r, stderr)
}

// runContext is the run's context: c.ctx, or the test's.
func (c testRun) runContext(t *testing.T) context.Context {
	t.Helper()
	if c.ctx != nil {
		return c.ctx
	}
	return t.Context()
}

// prepare writes the spec, starts the model and builds the options of c.
func (c testRun) prepare(t *testing.T) (testResult, ExecOptions, *bytes.Buffer) {
	t.Helper()
	spec := c.specFile
	if spec == "" {
		spec = filepath.Join(t.TempDir(), "task.yaml")
		mustWrite(t, spec, c.spec)
	}
	r := testResult{srv: c.srv, out: c.out}
	if r.srv == nil {
		r.srv = newModel(t, c.replies...)
	}
	if r.out == "" {
		r.out = t.TempDir()
	}
	env := append([]string{"PATH=" + os.Getenv("PATH")}, c.env...)
	if c.pin != "" {
		env = append(env, sandbox.LayersEnv+"="+c.pin)
	}
	stderr := &bytes.Buffer{}
	o := ExecOptions{Task: spec, Repo: c.repo, Out: r.out, BaseURL: r.srv.URL(), Quiet: true,
		APIKey: testKey, Stderr: stderr, Environ: env}
	if c.opts != nil {
		c.opts(&o)
	}
	return r, o, stderr
}

// finish reads back the log of a run that has ended.
func (c testRun) finish(t *testing.T, r testResult, stderr *bytes.Buffer) testResult {
	t.Helper()
	r.stderr = stderr.String()
	data, err := os.ReadFile(filepath.Join(r.out, "events.jsonl"))
	if c.noLog && errors.Is(err, fs.ErrNotExist) {
		return r
	}
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
