package batchreport

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/runner/event"
)

//go:embed report.html.tmpl
var htmlTemplate string

// page is what the HTML template reads.
type page struct {
	*Report
	Generated string
	Cards     []card
	Status    *barChart
	Cost      *barChart
	Duration  *barChart
	Diff      *barChart
	Trend     *trendChart
	Rows      []row
	AllStatus []StatusCount // for the status filter
}

type card struct{ Label, Value, Note string }

// row is one repository in the table.
type row struct {
	Repo
	Cost, Duration, Tokens, Note string
	TokensN                      int64
	AddW, DelW                   float64
	CostSort                     float64 // the cost to sort by; -1 when unknown
}

// costCard is the total cost's card: unknown when a repository's is.
func costCard(t Totals) card {
	if t.CostUSD == nil {
		return card{"Cost", "unknown", repositories(t.CostUnknown) + " without a known cost"}
	}
	return card{"Cost", event.FormatCost(*t.CostUSD), event.FormatCost(perRepo(*t.CostUSD, t.Repositories)) + " per repository"}
}

// HTML renders rep as one self-contained HTML page (see the package doc).
// Its size grows with the repositories: about 0.6 KB each.
func HTML(rep *Report) ([]byte, error) {
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"f1": f1, "statusClassOf": statusClass, "diffW": func() int { return diffBarMax },
		"add": func(a, b float64) float64 { return a + b }, "repositories": repositories,
	}).Parse(htmlTemplate)
	if err != nil {
		return nil, fmt.Errorf("batch report: template: %w", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, newPage(rep)); err != nil {
		return nil, fmt.Errorf("batch report: render html: %w", err)
	}
	return b.Bytes(), nil
}

func newPage(rep *Report) *page {
	t := rep.Totals
	p := &page{Report: rep, Generated: timeText(rep), AllStatus: rep.Statuses}
	p.Cards = []card{
		{"Repositories", fmt.Sprint(t.Repositories), plural(t.PullRequests, "pull request")},
		{"Succeeded", pct(t.SuccessRate), fmt.Sprintf("%d success or no_change", t.Succeeded)},
		costCard(t),
		{"Tokens", tokensText(t.Tokens.Input + t.Tokens.Output), fmt.Sprintf("%s in, %s out", tokensText(t.Tokens.Input), tokensText(t.Tokens.Output))},
		{"Duration", durationText(t.DurationMS), "summed over repositories"},
		{"Files changed", fmt.Sprint(t.FilesChanged), fmt.Sprintf("+%d −%d lines", t.Additions, t.Deletions)},
	}
	p.Status = statusChart(rep)
	p.Cost = topChart("chart-cost", "Cost per repository: top ten", rep.Repos, Cost,
		func(r Repo) string { return batch.FormatCost(r.CostUSD, "$") }, fmt.Sprintf("all %d, by cost", len(rep.Repos)))
	p.Duration = topChart("chart-duration", "Duration per repository: top ten", rep.Repos, Duration,
		func(r Repo) string { return durationText(r.DurationMS) }, fmt.Sprintf("all %d, by duration", len(rep.Repos)))
	p.Diff = diffChart(rep.Repos)
	p.Trend = newTrend(rep.Nights)
	p.Rows = rows(rep.Repos)
	return p
}

func perRepo(v float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return v / float64(n)
}

func statusChart(rep *Report) *barChart {
	var labels, values, classes []string
	var v []float64
	for _, s := range rep.Statuses {
		labels = append(labels, string(s.Status))
		values = append(values, fmt.Sprintf("%d (%s)", s.Count, pct(perRepo(float64(s.Count), rep.Totals.Repositories))))
		classes = append(classes, statusClass(s.Status))
		v = append(v, float64(s.Count))
	}
	return hbars("chart-status", "Statuses", labels, values, v, nil, classes, nil)
}

func topChart(id, title string, repos []Repo, key func(Repo) float64, value func(Repo) string, note string) *barChart {
	top := Top(repos, 10, key)
	var labels, values, classes []string
	var v, all []float64
	for _, r := range top {
		labels = append(labels, r.ID)
		values = append(values, value(r))
		classes = append(classes, statusClass(r.Status))
		v = append(v, key(r))
	}
	for _, r := range repos {
		all = append(all, key(r))
	}
	return hbars(id, title, labels, values, v, nil, classes, nil).withDistribution(all, note)
}

func diffChart(repos []Repo) *barChart {
	top := Top(repos, 10, LinesChanged)
	var labels, values, c1, c2 []string
	var adds, dels []float64
	for _, r := range top {
		labels = append(labels, r.ID)
		values = append(values, fmt.Sprintf("+%d −%d, %s", r.Additions, r.Deletions, plural(r.FilesChanged, "file")))
		adds, dels = append(adds, float64(r.Additions)), append(dels, float64(r.Deletions))
		c1, c2 = append(c1, "add"), append(c2, "del")
	}
	return hbars("chart-diff", "Largest changes: top ten", labels, values, adds, dels, c1, c2)
}

func rows(repos []Repo) []row {
	maxLines := 0
	for _, r := range repos {
		maxLines = max(maxLines, r.Lines())
	}
	out := make([]row, 0, len(repos))
	for _, r := range repos {
		w := row{Repo: r, Cost: batch.FormatCost(r.CostUSD, ""), CostSort: -1, Duration: durationText(r.DurationMS),
			TokensN: r.Tokens.Input + r.Tokens.Output}
		w.Tokens = tokensText(w.TokensN)
		if r.CostUSD != nil {
			w.CostSort = *r.CostUSD
		}
		if maxLines > 0 {
			w.AddW = float64(r.Additions) / float64(maxLines) * diffBarMax
			w.DelW = float64(r.Deletions) / float64(maxLines) * diffBarMax
		}
		w.Note = r.Error
		if r.PublishError != "" {
			w.Note = strings.TrimSpace(w.Note + " (publish: " + r.PublishError + ")")
		}
		w.Note = oneLine(w.Note, 160)
		out = append(out, w)
	}
	return out
}

// statusClass is the CSS class that colours a status.
func statusClass(s batch.Status) string {
	switch s {
	case batch.StatusSuccess, batch.StatusNoChange, batch.StatusTaskFailed, batch.StatusInfraFailed,
		batch.StatusTimeout, batch.StatusBudgetExceeded, batch.StatusSkipped, StatusMissing:
		return "s-" + string(s)
	}
	return "s-other"
}

// tokensText is a token count for reading: 950, 12.3k, 4.56M.
func tokensText(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.2fM", float64(n)/1e6)
}
