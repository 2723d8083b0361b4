package pipeline

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestCheck: Check passes a task exec would run, and refuses, as exec
// would and without writing anything, one with no API key and one whose
// cost budget is on a model with no price.
func TestCheck(t *testing.T) {
	var path string
	load := func(t *testing.T, text string) *spec.Spec {
		t.Helper()
		path = filepath.Join(t.TempDir(), "task.yaml")
		mustWrite(t, path, text)
		task, err := spec.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	out := filepath.Join(t.TempDir(), "out")
	ok := load(t, runSpec)
	if err := Check(t.Context(), ok, ExecOptions{Task: path, APIKey: testKey, Out: out}); err != nil {
		t.Fatalf("a valid task: %v", err)
	}
	if err := Check(t.Context(), ok, ExecOptions{Task: path, Out: out, Environ: []string{}}); ExitCode(err) != ExitUsage {
		t.Errorf("no API key: %v (exit %d), want exit 2", err, ExitCode(err))
	}
	unpriced := load(t, strings.Replace(runSpec, "model: gpt-4.1-mini", "model: my-local-model", 1)+"  max_cost_usd: 1\n")
	err := Check(t.Context(), unpriced, ExecOptions{Task: path, APIKey: testKey, BaseURL: "http://127.0.0.1:1/v1"})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "no price") {
		t.Errorf("unpriced budget: %v (exit %d), want exit 2 naming the missing price", err, ExitCode(err))
	}
	if errors.Is(err, ErrInfra) {
		t.Errorf("unpriced budget is an infra error: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) != 0 {
		t.Errorf("Check wrote %v", m)
	}
}

// TestCheckSpecAndPriced: a spec's own budget on a model without a price
// is refused at the budget's position; a priced model passes, and a spec
// without a model is not judged.
func TestCheckSpecAndPriced(t *testing.T) {
	p := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, p, strings.Replace(runSpec, "model: gpt-4.1-mini", "model: my-local-model", 1)+"  max_cost_usd: 1\n")
	task, err := spec.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if Priced(task, "my-local-model") || !Priced(task, "gpt-4.1-mini") {
		t.Errorf("Priced: my-local-model %v, gpt-4.1-mini %v", Priced(task, "my-local-model"), Priced(task, "gpt-4.1-mini"))
	}
	if err := CheckSpec(task); err == nil || !strings.Contains(err.Error(), "limits.max_cost_usd") {
		t.Errorf("CheckSpec: %v, want the budget's key", err)
	}
	task.Model = "gpt-4.1-mini"
	if err := CheckSpec(task); err != nil {
		t.Errorf("a priced model: %v", err)
	}
	task.Model = ""
	if err := CheckSpec(task); err != nil {
		t.Errorf("no model: %v", err)
	}
}

// TestRedactedError: a redacted error's text has the secret replaced and
// errors.Is still sees the original chain; nil stays nil.
func TestRedactedError(t *testing.T) {
	r := &execRun{}
	if r.redacted(nil) != nil {
		t.Fatal("nil became an error")
	}
	boom := errors.New("token sk-unit-0123456789abcdef refused")
	if got := r.redacted(boom); got != boom {
		t.Errorf("no redactor: %v", got)
	}
	r.outState.redactor = event.NewRedactor(nil, testKey)
	got := r.redacted(boom)
	if strings.Contains(got.Error(), testKey) || !errors.Is(got, boom) {
		t.Errorf("redacted: %q (Is %v)", got, errors.Is(got, boom))
	}
}
