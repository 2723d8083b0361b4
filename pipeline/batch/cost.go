package batch

import (
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
)

// Costs in a batch are *float64 US dollars where nil is unknown (a model
// with no price, a run whose usage never came): never shown or summed as
// 0. One rule everywhere (a repository's attempts, results.jsonl, the
// progress line, summary.md, batch report totals and trend), the rule of
// the runner's own totals: a sum with an unknown part is unknown.

// AddCost returns a + b, nil when either is unknown.
func AddCost(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	s := *a + *b
	return &s
}

// KnownCost is c, or 0 when unknown: for what can only count what is
// known (the total_max_cost_usd budget, sorting by cost).
func KnownCost(c *float64) float64 {
	if c == nil {
		return 0
	}
	return *c
}

// FormatCost is c as event.FormatCost shows it, with the "$" only when
// prefix is "$" (a table's column says USD), or "unknown".
func FormatCost(c *float64, prefix string) string {
	if c == nil {
		return "unknown"
	}
	s := event.FormatCost(*c)
	if prefix == "" {
		s = strings.TrimPrefix(s, "$")
	}
	return s
}

func zeroCost() *float64 { return new(float64) }
