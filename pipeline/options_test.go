package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// TestExecOptionsValidate: zero limits mean "not given"; negative ones and
// contradicting flags are usage errors that name the flag.
func TestExecOptionsValidate(t *testing.T) {
	base := ExecOptions{Task: "task.yaml"}
	tests := []struct {
		name    string
		mod     func(*ExecOptions)
		wantErr string // "" : valid
	}{
		{"defaults", func(*ExecOptions) {}, ""},
		{"max-steps 0 keeps the spec's", func(o *ExecOptions) { o.MaxSteps = 0 }, ""},
		{"timeout 0 keeps the spec's", func(o *ExecOptions) { o.Timeout = 0 }, ""},
		{"max-steps negative", func(o *ExecOptions) { o.MaxSteps = -3 }, "--max-steps -3"},
		{"timeout negative", func(o *ExecOptions) { o.Timeout = -time.Second }, "--timeout -1s"},
		{"no task", func(o *ExecOptions) { o.Task = "" }, "task spec file is required"},
		{"record and replay", func(o *ExecOptions) { o.Record, o.Replay = "a", "b" }, "--record and --replay"},
		{"max cost negative", func(o *ExecOptions) { o.MaxCostUSD = -1 }, "max cost -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.mod(&o)
			err := o.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want ErrUsage containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestLimitsOverride: a positive --max-steps or --timeout replaces the
// spec's limit; zero leaves it. MaxCostUSD caps the spec's budget.
func TestLimitsOverride(t *testing.T) {
	task := &spec.Spec{}
	task.Limits.MaxSteps, task.Limits.Timeout = 40, 20*time.Minute
	for _, tt := range []struct {
		steps   int
		timeout time.Duration
		want    int
		wantTO  time.Duration
	}{
		{0, 0, 40, 20 * time.Minute},
		{3, time.Minute, 3, time.Minute},
	} {
		r := &execRun{specState: specState{spec: task}, opts: ExecOptions{MaxSteps: tt.steps, Timeout: tt.timeout}}
		if l := r.limits(); l.MaxSteps != tt.want || l.Timeout != tt.wantTO {
			t.Errorf("limits() with --max-steps %d --timeout %s = %d, %s; want %d, %s",
				tt.steps, tt.timeout, l.MaxSteps, l.Timeout, tt.want, tt.wantTO)
		}
	}
}

// TestCostCap: ExecOptions.MaxCostUSD lowers the spec's limits.max_cost_usd
// and stands in for it when the spec has none; it never raises it.
func TestCostCap(t *testing.T) {
	for _, tt := range []struct{ spec, cap, want float64 }{
		{0, 0, 0}, {0, 2, 2}, {1, 2, 1}, {3, 2, 2}, {2, 0, 2},
	} {
		task := &spec.Spec{}
		task.Limits.MaxCostUSD = tt.spec
		r := &execRun{specState: specState{spec: task}, opts: ExecOptions{MaxCostUSD: tt.cap}}
		if got := r.limits().MaxCostUSD; got != tt.want {
			t.Errorf("spec %v, cap %v: max cost %v, want %v", tt.spec, tt.cap, got, tt.want)
		}
	}
}
