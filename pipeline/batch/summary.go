package batch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
)

// WriteSummary writes a Markdown summary of results to path: counts by
// status, then one table row per repository (and the ids with no result,
// if any). The file suits $GITHUB_STEP_SUMMARY as is.
func WriteSummary(path, name string, results []RepoResult, missing []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create summary dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(RenderSummary(name, results, missing)), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// RenderSummary renders the Markdown of WriteSummary.
func RenderSummary(name string, results []RepoResult, missing []string) string {
	var b strings.Builder
	counts := map[Status]int{}
	cost := zeroCost()
	for _, r := range results {
		counts[r.Status]++
		cost = AddCost(cost, r.CostUSD)
	}
	total := FormatCost(cost, "$")
	if cost == nil {
		total = "cost unknown"
	}
	fmt.Fprintf(&b, "## Batch %s: %s, %s\n\n", mdCell(name), Repositories(len(results)+len(missing)), total)
	b.WriteString("| Status | Repositories |\n|---|---:|\n")
	for _, s := range AllStatuses() {
		if counts[s] > 0 {
			fmt.Fprintf(&b, "| %s | %d |\n", s, counts[s])
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "| **missing** | %d |\n", len(missing))
	}
	b.WriteString("\n| Repository | Status | Cost (USD) | Steps | Files | Duration | PR or error |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		note := r.PRURL
		if note == "" {
			note = r.Error
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %s |\n", mdCell(r.ID), r.Status, FormatCost(r.CostUSD, ""),
			r.Steps, r.FilesChanged, event.FormatMS(r.DurationMS), mdCell(oneLine(note, 120)))
	}
	if len(missing) > 0 {
		b.WriteString("\n### Missing results\n\nThese repositories of the manifest have no result (a shard did not finish or its output was not merged):\n\n")
		for _, id := range missing {
			fmt.Fprintf(&b, "- %s\n", mdCell(id))
		}
	}
	return b.String()
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// oneLine collapses whitespace and truncates s to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
