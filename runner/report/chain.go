package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// maxChain bounds how many earlier runs LoadChain follows.
const maxChain = 100

// LoadChain loads the event log at path and, when its run continued an
// earlier one (run.started's continues), the earlier runs' logs too,
// following continues back as far as the logs are found: the reports of one
// conversation, earliest first. An earlier log that cannot be found ends
// the chain there (the reports found are returned, the first of them with
// Continues still set); one that cannot be read is an error.
func LoadChain(ctx context.Context, path string) ([]Report, error) {
	reps, err := Load(ctx, path)
	if err != nil || len(reps) != 1 {
		return reps, err
	}
	chain := reps
	seen := map[string]bool{reps[0].RunID: true}
	at := path
	for len(chain) < maxChain {
		c := chain[0].Continues
		if c == nil {
			break
		}
		prev, ok := findLog(c.Dir, at)
		if !ok {
			break
		}
		earlier, err := Load(ctx, prev)
		if err != nil {
			return nil, err
		}
		if len(earlier) != 1 || seen[earlier[0].RunID] || earlier[0].RunID != c.RunID {
			break // not the run named, or a loop
		}
		seen[earlier[0].RunID] = true
		chain = append(earlier, chain...)
		at = prev
	}
	return chain, nil
}

// findLog finds the events.jsonl of an earlier run's out dir dir, as given
// to --continue: as it is (absolute, or relative to the working
// directory), else beside the out dir of the log that names it (the usual
// .runner/runs/<id> layout, read from another directory).
func findLog(dir, from string) (string, bool) {
	cands := []string{filepath.Join(dir, outdir.EventsFile)}
	if !filepath.IsAbs(dir) {
		cands = append(cands, filepath.Join(filepath.Dir(filepath.Dir(from)), filepath.Base(dir), outdir.EventsFile))
	}
	for _, c := range cands {
		if _, err := os.Stat(c); err == nil {
			return c, true
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", false
		}
	}
	return "", false
}

// ChainMarkdown renders the reports of one conversation (LoadChain): a
// table of its runs with the totals, then each run's report.
func ChainMarkdown(chain []Report, o MarkdownOptions) string {
	if len(chain) < 2 {
		docs := make([]string, len(chain))
		for i, r := range chain {
			docs[i] = r.Markdown(o)
		}
		return strings.Join(docs, "\n---\n\n")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Conversation of %d runs\n\n", len(chain))
	b.WriteString("| # | run | status | steps | tokens | cost |\n|---|---|---|---|---|---|\n")
	var steps int
	var tokens event.Tokens
	cost, costKnown := 0.0, true
	for i, r := range chain {
		fmt.Fprintf(&b, "| %d | %s | %s %s | %d | %d | %s |\n", i+1, cell(r.RunID), statusIcon(r.Status),
			strings.ReplaceAll(string(r.Status), "_", " "), r.Steps, r.Tokens.Input+r.Tokens.Output, costText(r.CostUSD))
		steps += r.Steps
		tokens = tokens.Add(r.Tokens)
		if r.CostUSD == nil {
			costKnown = false
		} else {
			cost += *r.CostUSD
		}
	}
	total := "unknown"
	if costKnown {
		total = costText(&cost)
	}
	fmt.Fprintf(&b, "| | **total** | | %d | %d | %s |\n\n", steps, tokens.Input+tokens.Output, total)
	if first := chain[0].Continues; first != nil {
		fmt.Fprintf(&b, "The first run shown continues run %s, whose log was not found.\n\n", cell(first.RunID))
	}
	for i, r := range chain {
		if i > 0 {
			b.WriteString("\n---\n\n")
		}
		b.WriteString(r.Markdown(o))
	}
	return b.String()
}

// costText is a cost in USD, or "unknown".
func costText(c *float64) string {
	if c == nil {
		return "unknown"
	}
	return event.FormatCost(*c)
}
