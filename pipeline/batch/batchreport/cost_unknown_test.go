package batchreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestMain lets the exec pipeline's sandbox re-exec this binary.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// TestBatchUnpricedCostUnknown runs a real batch (the exec pipeline, the
// fake model server) with a model that has no price: every place that
// shows a cost says unknown, never $0: results.jsonl (null), the progress
// line, summary.md, and batch report's totals, rows and trend.
func TestBatchUnpricedCostUnknown(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Text("done"), llmtest.Text("done"))
	dir := t.TempDir()
	gittest.Init(t, filepath.Join(dir, "r1"), map[string]string{"README.md": "# r1\n"})
	writeFile(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nmodel: no-price-model\nprompt: hi\n")
	spec := filepath.Join(dir, "batch.yaml")
	writeFile(t, spec, "version: 1\nname: unpriced\ntask: task.yaml\nretries: 0\nrepos:\n  - path: r1\n")
	var nights []string
	var progress strings.Builder
	for _, night := range []string{"n1", "n2"} {
		out := filepath.Join(dir, night)
		progress.Reset()
		sum, err := batch.Run(t.Context(), batch.RunOptions{SpecPath: spec, Out: out, Progress: &progress, RetryBackoff: time.Millisecond,
			Executor: &batch.PipelineExecutor{BaseURL: srv.URL(), APIKey: "test", Model: "no-price-model"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Results) != 1 || sum.Results[0].Status != batch.StatusNoChange || sum.Results[0].CostUSD != nil || sum.CostUSD != nil {
			t.Fatalf("%s: results %+v, this run's cost %v: want no_change with unknown costs", night, sum.Results, sum.CostUSD)
		}
		nights = append(nights, out)
	}
	out := nights[1]
	line := strings.TrimSpace(readFile(t, filepath.Join(out, batch.ResultsFile)))
	var raw map[string]any
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		t.Fatal(err)
	}
	if c, ok := raw["cost_usd"]; !ok || c != nil {
		t.Errorf("results.jsonl cost_usd = %v (present %v), want null: %s", c, ok, line)
	}
	if p := progress.String(); !strings.Contains(p, "cost unknown") || strings.Contains(p, "$0.0000") {
		t.Errorf("progress line %q: want cost unknown, not $0.0000", p)
	}
	if s := readFile(t, filepath.Join(out, batch.SummaryFile)); !strings.Contains(s, "cost unknown") || strings.Contains(s, "0.0000") {
		t.Errorf("summary.md shows a number for an unknown cost:\n%s", s)
	}
	rep, err := Load(t.Context(), nights, Options{LinkBase: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.CostUSD != nil || rep.Totals.CostUnknown != 1 || rep.Nights[0].Totals.CostUSD != nil {
		t.Errorf("report totals %+v, first night %+v: want unknown costs", rep.Totals, rep.Nights[0].Totals)
	}
	for _, format := range []string{FormatMarkdown, FormatHTML, FormatJSON} {
		body, err := Render(rep, format)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(body), "0.0000") || strings.Contains(string(body), "$0.00") || !strings.Contains(string(body), "unknown") &&
			!strings.Contains(string(body), `"cost_usd": null`) {
			t.Errorf("%s report shows a number for an unknown cost:\n%s", format, body)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
