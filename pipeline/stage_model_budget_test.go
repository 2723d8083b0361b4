package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	assertAtValue(t, err, spec, "limits.max_cost_usd is 0.5 USD", "0.5")

	// The caller's cap (batch gives each repository its share).
	plain := strings.Replace(runSpec, "model: gpt-4.1-mini", "model: my-local-llama", 1)
	mustWrite(t, spec, plain)
	_, err = Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(),
		APIKey: testKey, MaxCostUSD: 2, LimitsFrom: "nightly.yaml", Quiet: true, Stdout: &buf, Stderr: &buf})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "limits.max_cost_usd in nightly.yaml is 2 USD") {
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

// assertAtValue asserts that err is one spec error "FILE:LINE:COL: msg…"
// whose position in file is where want (the value) begins.
func assertAtValue(t *testing.T, err error, file, msg, want string) {
	t.Helper()
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `:(\d+):(\d+): ` + regexp.QuoteMeta(msg)).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error %q does not start with %s:LINE:COL: %s", err, file, msg)
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	data, rerr := os.ReadFile(file)
	if rerr != nil {
		t.Fatal(rerr)
	}
	lines := strings.Split(string(data), "\n")
	if line > len(lines) || col > len(lines[line-1]) || !strings.HasPrefix(lines[line-1][col-1:], want) {
		t.Fatalf("%s:%d:%d is not at %q in\n%s", file, line, col, want, data)
	}
}
