package batchreport

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// TestOneCostFigure runs a real batch whose one run costs $0.0008 (1,000
// tokens in and 250 out of gpt-4.1-mini) and reads its cost from every
// output: the progress line, summary.md and each format of batch report
// show the same figure, never one rounded to $0.00.
func TestOneCostFigure(t *testing.T) {
	t.Parallel()
	usage := &llmtest.Usage{PromptTokens: 1000, CompletionTokens: 250}
	srv := llmtest.NewServer(t, llmtest.Turn{Text: "done", Usage: usage}.Reply())
	dir := t.TempDir()
	gittest.Init(t, filepath.Join(dir, "r1"), map[string]string{"README.md": "# r1\n"})
	writeFile(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nmodel: gpt-4.1-mini\nprompt: hi\n")
	spec := filepath.Join(dir, "batch.yaml")
	writeFile(t, spec, "version: 1\nname: priced\ntask: task.yaml\nretries: 0\nrepos:\n  - path: r1\n")
	out := filepath.Join(dir, "n1")
	var progress strings.Builder
	if _, err := batch.Run(t.Context(), batch.RunOptions{SpecPath: spec, Out: out, Progress: &progress, RetryBackoff: time.Millisecond,
		Executor: &batch.PipelineExecutor{BaseURL: srv.URL(), APIKey: "test", Model: "gpt-4.1-mini"}}); err != nil {
		t.Fatal(err)
	}
	const want = "0.0008"
	rounded := regexp.MustCompile(`\$0\.00?\b|\$0\.00[^0-9]`)
	outputs := map[string]string{"progress": progress.String(), "summary.md": readFile(t, filepath.Join(out, batch.SummaryFile))}
	rep, err := Load(t.Context(), []string{out}, Options{LinkBase: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{FormatMarkdown, FormatHTML} {
		body, err := Render(rep, format)
		if err != nil {
			t.Fatal(err)
		}
		outputs[format+" report"] = string(body)
	}
	for name, body := range outputs {
		if !strings.Contains(body, want) || rounded.MatchString(body) {
			t.Errorf("%s should show the cost as %s, never rounded to $0.00 (found %q):\n%s", name, want, rounded.FindString(body), clipText(body))
		}
	}
}

// clipText is the first 3,000 bytes of s.
func clipText(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}
