package batch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// execFunc adapts a function to Executor.
type execFunc func(ctx context.Context, job Job) (Outcome, error)

func (f execFunc) Exec(ctx context.Context, job Job) (Outcome, error) { return f(ctx, job) }

// TestExampleBatch runs examples/batch as documented: make the demo
// repositories, then run the batch (with a scripted executor).
func TestExampleBatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"batch.yaml", "task.yaml", "repos.txt", "make-demo-repos.sh"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "batch", f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, f), string(data))
	}
	cmd := exec.CommandContext(t.Context(), "sh", filepath.Join(dir, "make-demo-repos.sh"))
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make-demo-repos.sh: %v\n%s", err, out)
	}
	inputs := map[string]map[string]string{}
	ex := execFunc(func(_ context.Context, job Job) (Outcome, error) {
		if _, err := os.Stat(filepath.Join(job.WorkDir, "main.go")); err != nil {
			return Outcome{}, err
		}
		inputs[job.RepoID] = job.Inputs
		return Outcome{Status: "success", Steps: 1, CostUSD: usd(0.01)}, nil
	})
	sum, err := Run(t.Context(), RunOptions{SpecPath: filepath.Join(dir, "batch.yaml"), Out: filepath.Join(dir, "out"), Executor: ex, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts[StatusNoChange] != 3 || sum.Failed {
		t.Errorf("summary: %+v", sum)
	}
	want := map[string]map[string]string{"demo-svc-a": nil, "demo-svc-b": {"indent": "tab"}, "demo-svc-c-main": nil}
	if diff := cmp.Diff(want, inputs); diff != "" {
		t.Errorf("repositories and inputs (-want +got):\n%s", diff)
	}
}
