package github

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
)

func TestGoldenBodies(t *testing.T) {
	cost := 0.0123
	s := &Sticky{Task: "fix-tests"}
	prov := Provenance{Task: "fix-tests", RunURL: "https://github.com/o/r/actions/runs/9", Model: "gpt-4.1-mini",
		CostUSD: &cost, Checks: []CheckResult{{"tests", true}, {"lint", false}}}
	outcome, err := ReadOutcome(strings.NewReader(startedLine + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	report := "### ✅ runner: fix-tests\n\n| status | success |\n|---|---|\n\nDone.\n\n<details><summary>Patch</summary>\n\n```diff\n" +
		strings.Repeat("+ added line\n", 200) + "```\n\n</details>\n"
	tests := []struct{ name, got string }{
		{"sticky-start.md", s.Body("⏳ **runner** is working on task `fix-tests`… [View the run](https://github.com/o/r/actions/runs/9).")},
		{"provenance.md", prov.Markdown()},
		{"pr-body.md", PRBody(PROptions{Body: "The tests pass now.", Provenance: prov})},
		{"outcome-cancelled.md", outcome.Markdown()},
		{"report-cut.md", FitComment(s.Body(report), 900)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { golden.Check(t, filepath.Join("testdata", "golden", tt.name), []byte(tt.got)) })
	}
}
