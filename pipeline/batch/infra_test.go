package batch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestResultInfraMapping: a run's outcome (run.finished, as result.json
// holds it) maps to an infrastructure failure exactly when the machinery
// failed.
func TestResultInfraMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, result string
		infra        bool
		status       Status // statusOf, for task failures
	}{
		{"provider gave up", `{"status":"error","exit_code":3,"error":{"class":"retryable","message":"gave up after 5 retries: provider error (retryable)"}}`, true, ""},
		{"provider refused", `{"status":"error","exit_code":3,"error":{"class":"fatal","message":"provider error (fatal): 401"}}`, true, ""},
		{"pipeline infra", `{"status":"error","exit_code":3,"error":{"class":"infra","message":"disk full"}}`, true, ""},
		{"agent crash", `{"status":"error","exit_code":3,"error":{"class":"internal","message":"panic"}}`, true, ""},
		{"context overflow", `{"status":"error","exit_code":3,"error":{"class":"context-overflow","message":"full"}}`, false, StatusTaskFailed},
		{"checks failed", `{"status":"failed","exit_code":1,"error":{"class":"checks","message":"tests"}}`, false, StatusTaskFailed},
		{"max steps", `{"status":"max_steps","exit_code":1,"error":{"class":"max_steps","message":"20"}}`, false, StatusTaskFailed},
		{"success", `{"status":"success","exit_code":0,"files_changed":0}`, false, StatusNoChange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fin event.RunFinished
			if err := json.Unmarshal([]byte(tt.result), &fin); err != nil {
				t.Fatal(err)
			}
			o, err := outcomeOf(pipeline.Result{Reported: true, Status: fin.Status, ExitCode: fin.ExitCode, Error: fin.Error})
			if err != nil {
				t.Fatalf("outcomeOf = %+v, %v", o, err)
			}
			if o.Infra() != tt.infra {
				t.Errorf("Infra() = %v, want %v (outcome %+v)", o.Infra(), tt.infra, o)
			}
			if !tt.infra && statusOf(o) != tt.status {
				t.Errorf("statusOf = %s, want %s", statusOf(o), tt.status)
			}
		})
	}
}

// gaveUpExec is an Executor whose provider never answers: every run ends
// as the exec pipeline records it after the runner's own retries.
type gaveUpExec struct{ calls atomic.Int32 }

func (g *gaveUpExec) Exec(_ context.Context, job Job) (Outcome, error) {
	g.calls.Add(1)
	return Outcome{Status: "error", ErrorClass: event.ClassRetryable, CostUSD: usd(0.01),
		Error: "gave up after 5 retries: provider error (retryable): connection refused"}, nil
}

// TestProviderGaveUpIsInfraFailed: a provider error that outlived the
// runner's retries is retried per the batch's retries, then infra_failed.
func TestProviderGaveUpIsInfraFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 2, "retries: 2\n")
	ex := &gaveUpExec{}
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, "out"), Executor: ex,
		RetryBackoff: time.Millisecond, CacheDir: sharedCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if n := ex.calls.Load(); n != 6 {
		t.Errorf("executor calls = %d, want 6 (2 repositories × 3 attempts)", n)
	}
	for _, r := range sum.Results {
		if r.Status != StatusInfraFailed || r.Attempts != 3 || r.ErrorClass != event.ClassRetryable ||
			!strings.HasPrefix(r.Error, "after 3 attempts: ") || !strings.Contains(r.Error, "gave up after 5 retries") {
			t.Errorf("result = %+v, want infra_failed after 3 attempts", r)
		}
	}
	if sum.Counts[StatusInfraFailed] != 2 || sum.Counts[StatusTaskFailed] != 0 {
		t.Errorf("counts = %v", sum.Counts)
	}
}

// TestPipelineExecutorProviderDown runs the real exec pipeline against a
// loopback provider that refuses every call (HTTP 401: the runner gives
// up at once, where a closed port would take its full retry backoff): the
// batch retries each repository and records infra_failed, not task_failed.
func TestPipelineExecutorProviderDown(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	spec := makeBatch(t, dir, 1, "retries: 1\n")
	write(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nprompt: hi {{ .Inputs.name }}\ninputs:\n  name: {required: true}\n")
	out := filepath.Join(dir, "out")
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, RetryBackoff: time.Millisecond, CacheDir: sharedCache(t),
		Executor: &PipelineExecutor{BaseURL: srv.URL + "/v1", APIKey: "bad", Model: "gpt-4.1-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Results[0]
	if r.Status != StatusInfraFailed || r.Attempts != 2 || r.ErrorClass != event.ClassFatal {
		t.Errorf("result = %+v, want infra_failed (class fatal) after 2 attempts", r)
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("provider calls = %d, want 2 (one per attempt)", n)
	}
	if _, err := os.Stat(filepath.Join(out, r.ID, "result.json")); err != nil {
		t.Errorf("the last attempt's result.json: %v", err)
	}
}
