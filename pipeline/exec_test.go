package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
)

func TestStatusCode(t *testing.T) {
	for status, want := range map[event.Status]int{
		event.StatusSuccess: 0, event.StatusFailed: 1, event.StatusMaxSteps: 1,
		event.StatusBudgetExceeded: 1, event.StatusTimeout: 1, event.StatusBlocked: 1,
		event.StatusError: 3, event.StatusCancelled: 130,
	} {
		if got := statusCode(status); got != want {
			t.Errorf("statusCode(%s) = %d, want %d", status, got, want)
		}
	}
}

func TestDecideStatus(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	termed, term := context.WithCancelCause(t.Context())
	term(signalLike(syscall.SIGTERM.String() + " signal received")) // what signal.NotifyContext sets
	tests := map[string]struct {
		ctx       context.Context
		mainErr   error
		result    *runner.Result
		checksErr error
		want      runStatus
	}{
		"success": {want: runStatus{Status: "success"}},
		"signal wins": {ctx: cancelled, mainErr: ErrInfra, result: &runner.Result{Status: "success"},
			want: runStatus{"cancelled", 130, "cancelled", "cancelled"}},
		"SIGTERM": {ctx: termed, result: &runner.Result{Status: "success"},
			want: runStatus{"cancelled", 130, "cancelled", "cancelled (SIGTERM)"}},
		"timeout names its limit": {result: &runner.Result{Status: "timeout", Err: &runner.Error{Class: event.ClassTimeout, Message: "x"}},
			want: runStatus{"timeout", 1, "timeout", "the run's timeout (1ms, --timeout) was reached"}},
		"infra": {mainErr: fmt.Errorf("snapshot: %w", ErrInfra), want: runStatus{"error", 3, "infra", "snapshot: infrastructure error"}},
		"agent status": {result: &runner.Result{Status: "max_steps", Err: &runner.Error{Class: event.ClassMaxSteps, Message: "12 steps"}},
			want: runStatus{"max_steps", 1, "max_steps", "12 steps"}},
		"checks": {result: &runner.Result{Status: "success"}, checksErr: errors.New("check tests failed"),
			want: runStatus{"failed", 1, "checks", "check tests failed"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := &execRun{agentState: agentState{checksErr: tt.checksErr}, specState: specState{spec: &spec.Spec{}}, opts: ExecOptions{Timeout: time.Millisecond}}
			if tt.result != nil {
				r.result, r.ranAgent = *tt.result, true
			}
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			if got := r.decideStatus(ctx, tt.mainErr); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestExcludes(t *testing.T) {
	wt := t.TempDir()
	if real, err := filepath.EvalSymlinks(wt); err == nil {
		wt = real
	}
	outside := t.TempDir()
	tests := map[string]struct {
		r    execRun
		want string
	}{
		"out dir inside": {execRun{outState: outState{outDir: filepath.Join(wt, ".runner/runs/x"), patchPath: filepath.Join(wt, ".runner/runs/x/changes.patch")}},
			".runner,.runner/runs/x,.runner/runs/x/changes.patch"},
		// The work tree's .runner (the runner's state) is always kept out.
		"all outside":      {execRun{outState: outState{outDir: outside, patchPath: filepath.Join(outside, "p")}}, ".runner"},
		"work tree is out": {execRun{outState: outState{outDir: wt}}, ".runner"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.r.workTree = wt
			if got := strings.Join(tt.r.excludes(), ","); got != tt.want {
				t.Errorf("excludes = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFeedback(t *testing.T) {
	got := feedback([]checkResult{{check: spec.Check{Name: "tests", Run: "go test ./..."}, exit: 1, output: "FAIL x\n"}})
	for _, want := range []string{`Check "tests"`, "`go test ./...`", "exit code 1", "```\nFAIL x\n```"} {
		if !strings.Contains(got, want) {
			t.Errorf("feedback lacks %q:\n%s", want, got)
		}
	}
}

func TestFinalContextSurvivesCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	fctx, done := finalContext(ctx, patchGrace)
	defer done()
	cancel()
	if fctx.Err() != nil {
		t.Fatal("the final context was cancelled with its parent")
	}
	if _, ok := fctx.Deadline(); !ok {
		t.Fatal("the final context has no deadline")
	}
	<-fctx.Done() // ends after the grace period
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
