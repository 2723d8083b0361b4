package batchreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// Formats of Render.
const (
	FormatHTML     = "html"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Render renders rep as format (FormatHTML, FormatMarkdown or FormatJSON).
func Render(rep *Report, format string) ([]byte, error) {
	switch format {
	case FormatHTML:
		return HTML(rep)
	case FormatMarkdown:
		return []byte(Markdown(rep)), nil
	case FormatJSON:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return nil, fmt.Errorf("batch report: encode json: %w", err)
		}
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf("batch report: unknown format %q (use html, markdown or json)", format)
}

// Markdown renders rep as GitHub-flavoured Markdown: totals, statuses, the
// top ten by cost, duration and lines changed, errors by class, the trend
// (with several nights), one row per repository, and problems found.
func Markdown(rep *Report) string {
	var b strings.Builder
	t := rep.Totals
	fmt.Fprintf(&b, "## Batch %s: %s, %s succeeded, %s\n\n", mdCell(rep.Name), repositories(t.Repositories), pct(t.SuccessRate), totalCostText(t, "$"))
	fmt.Fprintf(&b, "From %s; last result %s.\n\n", mdCell(strings.Join(rep.Dirs, ", ")), timeText(rep))
	b.WriteString("| Total | |\n|---|---:|\n")
	fmt.Fprintf(&b, "| Repositories | %d |\n| Succeeded (success, no_change) | %d (%s) |\n", t.Repositories, t.Succeeded, pct(t.SuccessRate))
	fmt.Fprintf(&b, "| Cost (USD) | %s |\n| Tokens (input / output) | %d / %d |\n", totalCostText(t, ""), t.Tokens.Input, t.Tokens.Output)
	fmt.Fprintf(&b, "| Duration (summed) | %s |\n| Steps | %d |\n", durationText(t.DurationMS), t.Steps)
	fmt.Fprintf(&b, "| Files changed | %d (+%d −%d) |\n| Pull requests | %d |\n\n", t.FilesChanged, t.Additions, t.Deletions, t.PullRequests)
	mdStatuses(&b, rep)
	mdTop(&b, "Cost: top ten", "Cost (USD)", Top(rep.Repos, 10, Cost), func(r Repo) string { return batch.FormatCost(r.CostUSD, "") })
	mdTop(&b, "Duration: top ten", "Duration", Top(rep.Repos, 10, Duration), func(r Repo) string { return durationText(r.DurationMS) })
	mdTop(&b, "Largest changes: top ten", "Lines (+/−)", Top(rep.Repos, 10, LinesChanged), func(r Repo) string {
		return fmt.Sprintf("+%d −%d in %s", r.Additions, r.Deletions, plural(r.FilesChanged, "file"))
	})
	mdErrors(&b, rep.Errors)
	mdTrend(&b, rep.Nights)
	mdRepos(&b, rep.Repos)
	if len(rep.Problems) > 0 {
		b.WriteString("### Problems\n\n")
		for _, p := range rep.Problems {
			fmt.Fprintf(&b, "- %s\n", mdCell(p))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func mdStatuses(b *strings.Builder, rep *Report) {
	b.WriteString("### Statuses\n\n| Status | Repositories | |\n|---|---:|---|\n")
	for _, s := range rep.Statuses {
		width := 0
		if rep.Totals.Repositories > 0 {
			width = (s.Count*20 + rep.Totals.Repositories - 1) / rep.Totals.Repositories
		}
		fmt.Fprintf(b, "| %s | %d | %s |\n", s.Status, s.Count, strings.Repeat("█", width))
	}
	b.WriteString("\n")
}

func mdTop(b *strings.Builder, title, col string, repos []Repo, value func(Repo) string) {
	if len(repos) == 0 {
		return
	}
	fmt.Fprintf(b, "### %s\n\n| Repository | %s | Status |\n|---|---:|---|\n", title, col)
	for _, r := range repos {
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(r.ID), value(r), r.Status)
	}
	b.WriteString("\n")
}

func mdErrors(b *strings.Builder, groups []ErrorGroup) {
	if len(groups) == 0 {
		return
	}
	b.WriteString("### Errors by class\n\n| Class | Repositories | Statuses | Example | First repositories |\n|---|---:|---|---|---|\n")
	for _, g := range groups {
		var st []string
		for _, s := range g.Statuses {
			st = append(st, fmt.Sprintf("%s: %d", s.Status, s.Count))
		}
		ids := g.Repos
		more := ""
		if len(ids) > 10 {
			ids, more = ids[:10], fmt.Sprintf(" and %d more", len(g.Repos)-10)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s%s |\n", mdCell(g.Class), g.Count, strings.Join(st, ", "),
			mdCell(oneLine(g.Example, 120)), mdCell(strings.Join(ids, ", ")), more)
	}
	b.WriteString("\n")
}

func mdTrend(b *strings.Builder, nights []Night) {
	if len(nights) < 2 {
		return
	}
	b.WriteString("### Trend\n\n| Night | Last result | Repositories | Success rate | Cost (USD) |\n|---|---|---:|---:|---:|\n")
	for _, n := range nights {
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s |\n", mdCell(n.Label), n.FinishedAt.UTC().Format("2006-01-02 15:04"),
			n.Totals.Repositories, pct(n.Totals.SuccessRate), totalCostText(n.Totals, ""))
	}
	b.WriteString("\n")
}

func mdRepos(b *strings.Builder, repos []Repo) {
	b.WriteString("### Repositories\n\n| Repository | Status | Cost (USD) | Duration | Steps | Files | +/− | Tokens in/out | Links | PR or error |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, r := range repos {
		var links []string
		for _, l := range []struct{ name, href string }{{"patch", r.Links.Patch}, {"summary", r.Links.Summary}, {"events", r.Links.Events}} {
			if l.href != "" {
				links = append(links, fmt.Sprintf("[%s](%s)", l.name, l.href))
			}
		}
		note := r.PRURL
		if note == "" {
			note = r.Error
		}
		if r.PublishError != "" {
			note = strings.TrimSpace(note + " (publish: " + r.PublishError + ")")
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %d | +%d −%d | %d / %d | %s | %s |\n", mdCell(r.ID), r.Status, batch.FormatCost(r.CostUSD, ""),
			durationText(r.DurationMS), r.Steps, r.FilesChanged, r.Additions, r.Deletions, r.Tokens.Input, r.Tokens.Output,
			strings.Join(links, " "), mdCell(oneLine(note, 120)))
	}
	b.WriteString("\n")
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	if !strings.ContainsAny(s, "|\n\r<>[]") {
		return s // the common case: an id, a status
	}
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`).Replace(s)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func timeText(rep *Report) string {
	if rep.FinishedAt.IsZero() {
		return "none"
	}
	return rep.FinishedAt.UTC().Format("2006-01-02 15:04:05 UTC")
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// totalCostText is a total's cost, or "cost unknown (N repositories
// without a known cost)" when some repository's is unknown (the total then
// is too).
func totalCostText(t Totals, prefix string) string {
	if t.CostUSD == nil {
		return fmt.Sprintf("cost unknown (%s without a known cost)", repositories(t.CostUnknown))
	}
	return batch.FormatCost(t.CostUSD, prefix)
}

// repositories is "1 repository", "2 repositories".
func repositories(n int) string { return batch.Repositories(n) }
