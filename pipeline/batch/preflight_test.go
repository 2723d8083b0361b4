package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline"
)

// preflightExec is a fakeExec whose Preflight fails with err.
type preflightExec struct {
	*fakeExec
	err error
}

func (p preflightExec) Preflight(context.Context) error { return p.err }

// TestRunPreflight: an executor that cannot run stops the batch once, up
// front, before the manifest is frozen, anything is cloned or any Exec.
// (The pipeline executor's missing key is the task check's, per wire:
// TestRunClaudeBatchWithoutOpenAIKey.)
func TestRunPreflight(t *testing.T) {
	t.Parallel()
	errNoCreds := errors.New("no credentials")
	tests := []struct {
		name     string
		exec     func() (Executor, *fakeExec)
		wantErr  []error // nil: the batch runs
		wantCode int
		wantMsg  string
	}{
		{"a failing preflight stops before Exec", func() (Executor, *fakeExec) {
			fe := newFakeExec(func(string) behaviour { return edit })
			return preflightExec{fe, errNoCreds}, fe
		}, []error{ErrPreflight, errNoCreds}, pipeline.ExitInfra, "batch cannot start: no credentials"},
		{"a passing preflight runs the batch", func() (Executor, *fakeExec) {
			fe := newFakeExec(func(string) behaviour { return edit })
			return preflightExec{fe, nil}, fe
		}, nil, pipeline.ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			spec := makeBatch(t, dir, 2, "")
			out, cache := filepath.Join(dir, "out"), filepath.Join(dir, "cache")
			ex, fe := tt.exec()
			sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: cache, Executor: ex})
			for _, want := range tt.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want it to match %v", err, want)
				}
			}
			if got := pipeline.ExitCode(err); got != tt.wantCode {
				t.Errorf("exit code %d, want %d (err %v)", got, tt.wantCode, err)
			}
			if tt.wantErr == nil {
				if err != nil || sum.Ran != 2 {
					t.Fatalf("ran %d, err %v; want 2 repositories run", sum.Ran, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("message %q, want it to start with %q", err, tt.wantMsg)
			}
			for _, p := range []string{filepath.Join(out, ManifestFile), cache} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists after a failed preflight (stat: %v)", p, err)
				}
			}
			if fe != nil {
				if calls, _, _ := fe.counts(); len(calls) != 0 {
					t.Errorf("Exec called after a failed preflight: %v", calls)
				}
			}
		})
	}
}
