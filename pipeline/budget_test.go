package pipeline

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestBudgetNeedsAPrice: a cost budget on a model the catalogue has no
// price for could never stop the run (its cost is unknown), so it is an
// invalid spec (exit 2) that names the model and both ways out, before any
// model call; with a price under models: the same spec runs. A budget
// given by the caller (batch's share) is held to the same rule.
func TestBudgetNeedsAPrice(t *testing.T) {
	spec, repo := execFixture(t)
	unpriced := strings.Replace(runSpec, "model: gpt-4.1-mini", "model: my-local-llama", 1) +
		"  max_cost_usd: 0.5\n"
	mustWrite(t, spec, unpriced)
	srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
	var buf bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(),
		APIKey: testKey, Quiet: true, Stdout: &buf, Stderr: &buf})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `model "my-local-llama" has no price`) ||
		!strings.Contains(err.Error(), "models:") || !strings.Contains(err.Error(), "max_tokens") {
		t.Fatalf("unpriced budget: exit %d, %v", ExitCode(err), err)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("the model was called")
	}

	// The caller's cap (batch gives each repository its share).
	plain := strings.Replace(runSpec, "model: gpt-4.1-mini", "model: my-local-llama", 1)
	mustWrite(t, spec, plain)
	_, err = Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(),
		APIKey: testKey, MaxCostUSD: 2, Quiet: true, Stdout: &buf, Stderr: &buf})
	if ExitCode(err) != ExitUsage {
		t.Fatalf("unpriced caller budget: exit %d, %v", ExitCode(err), err)
	}

	// With a price, the budget works and the run goes on.
	mustWrite(t, spec, unpriced+"models:\n  my-local-llama: {input_price_per_million: 0.1, output_price_per_million: 0.2}\n")
	res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "o"), BaseURL: srv.URL(),
		APIKey: testKey, Quiet: true, Stdout: &buf, Stderr: &buf})
	if err != nil || res.Status != event.StatusSuccess || res.CostUSD == nil {
		t.Fatalf("priced budget: %v %+v", err, res)
	}
}
