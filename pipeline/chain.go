package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/runner/report"
)

// A conversation is a chain of runs, each continuing the last. Each
// run's history header keeps the earlier runs' summaries (historyfile.ChainRun), so
// the next run knows what the whole chain spent (limits.total) and can
// show it (the sticky comment's chain table) without the earlier out
// dirs, which on GitHub are artifacts that expire.

// promptMax bounds a prompt kept in a chain summary, in runes.
const promptMax = 300

// cutPrompt is p on one line, at most promptMax runes.
func cutPrompt(p string) string {
	p = strings.Join(strings.Fields(p), " ")
	if utf8.RuneCountInString(p) <= promptMax {
		return p
	}
	r := []rune(p)
	return string(r[:promptMax-1]) + "…"
}

// summarizeRun is the chain entry of the run whose out dir is dir and
// whose history header is h: totals from its event log (a log cut by a
// kill still counts its finished steps), its own change from run.patch,
// else changes.patch.
func summarizeRun(ctx context.Context, dir string, h historyfile.Line) (historyfile.ChainRun, error) {
	c := historyfile.ChainRun{RunID: h.RunID, Prompt: h.Prompt, Status: "incomplete", URL: h.RunURL}
	reps, err := report.Load(ctx, filepath.Join(dir, outdir.EventsFile))
	if errors.Is(err, os.ErrNotExist) {
		reps, err = nil, nil // its log went elsewhere (--events): nothing is known of it
	}
	if err != nil {
		return c, fmt.Errorf("%w: run %s: %w", ErrHistory, h.RunID, err)
	}
	if len(reps) == 1 {
		r := reps[0]
		c.Status, c.Steps, c.Tokens, c.CostUSD = r.Status, r.Steps, r.Tokens, r.CostUSD
	}
	patch := filepath.Join(dir, outdir.RunPatch)
	if _, err := os.Stat(patch); err != nil {
		patch = filepath.Join(dir, outdir.PatchFile)
	}
	c.Files, c.Additions, c.Deletions = patchStat(patch)
	return c, nil
}

// patchStat counts the files and the added and deleted lines of a unified
// diff file (0s when it cannot be read).
func patchStat(path string) (files, adds, dels int) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "diff --git "):
			files++
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			adds++
		case strings.HasPrefix(l, "-"):
			dels++
		}
	}
	return files, adds, dels
}

// spent is what the runs of a chain used together.
type spent struct {
	Runs    int
	Steps   int
	Tokens  int64    // input + output
	CostUSD *float64 // nil when any run's cost is unknown
}

// chainSpent sums the chain.
func chainSpent(chain []historyfile.ChainRun) spent {
	s := spent{Runs: len(chain)}
	cost, known := 0.0, true
	for _, c := range chain {
		s.Steps += c.Steps
		s.Tokens += c.Tokens.Input + c.Tokens.Output
		if c.CostUSD == nil {
			known = false
		} else {
			cost += *c.CostUSD
		}
	}
	if known {
		s.CostUSD = &cost
	}
	return s
}

// chain is the runs before this one (empty for a fresh run).
func (r *execRun) chain() []historyfile.ChainRun {
	if r.continued == nil {
		return nil
	}
	return r.continued.chain
}

// sessionLimits are the limits the session runs under: the per-run
// limits, each lowered to what limits.total leaves after the earlier runs
// of the chain. exhausted names a total already used up ("" if none).
func (r *execRun) sessionLimits() (l runner.Limits, exhausted string) {
	l = r.limits()
	t := r.spec.Limits.Total
	if !t.Any() {
		return l, ""
	}
	s := chainSpent(r.chain())
	if t.MaxSteps > 0 {
		left := t.MaxSteps - s.Steps
		if left <= 0 {
			return l, fmt.Sprintf("the conversation's %s took %s, limits.total.max_steps is %d", earlierRuns(s.Runs), counted(s.Steps, "step"), t.MaxSteps)
		}
		if l.MaxSteps <= 0 || left < l.MaxSteps {
			l.MaxSteps = left
		}
	}
	if t.MaxTokens > 0 {
		left := t.MaxTokens - s.Tokens
		if left <= 0 {
			return l, fmt.Sprintf("the conversation's %s used %s, limits.total.max_tokens is %d", earlierRuns(s.Runs), counted(int(s.Tokens), "token"), t.MaxTokens)
		}
		if l.MaxTokens <= 0 || left < l.MaxTokens {
			l.MaxTokens = left
		}
	}
	if t.MaxCostUSD > 0 && s.CostUSD != nil {
		left := t.MaxCostUSD - *s.CostUSD
		if left <= 0 {
			return l, fmt.Sprintf("the conversation's %s cost %s, limits.total.max_cost_usd is %s", earlierRuns(s.Runs), event.FormatCost(*s.CostUSD), event.FormatCost(t.MaxCostUSD))
		}
		if l.MaxCostUSD <= 0 || left < l.MaxCostUSD {
			l.MaxCostUSD = left
		}
	}
	return l, ""
}

// totalEvent is run.started's limits.total: the conversation's limits and
// what the earlier runs spent; nil when the spec sets none.
func (r *execRun) totalEvent() *event.TotalLimits {
	t := r.spec.Limits.Total
	if !t.Any() {
		return nil
	}
	s := chainSpent(r.chain())
	return &event.TotalLimits{MaxSteps: t.MaxSteps, MaxCostUSD: t.MaxCostUSD, MaxTokens: t.MaxTokens,
		Spent: event.Spent{Runs: s.Runs, Steps: s.Steps, Tokens: s.Tokens, CostUSD: s.CostUSD}}
}

// exhaustedResult is the outcome of a run whose conversation had used up
// a total limit before it started: no model call, the budget's status.
func exhaustedResult(why string) runner.Result {
	status, class := event.StatusBudgetExceeded, event.ClassBudget
	if strings.Contains(why, "max_steps") {
		status, class = event.StatusMaxSteps, event.ClassMaxSteps
	}
	return runner.Result{Status: status, Err: &runner.Error{Class: class,
		Message: why + ": nothing is left for this run (raise limits.total, or start a fresh run)"}}
}

// totalMessage rewrites the message of a run the total stopped: when the
// per-run limit it hit was lowered by limits.total, the message says so.
func (r *execRun) totalMessage(res *runner.Result) {
	t := r.spec.Limits.Total
	if !t.Any() || (res.Status != event.StatusBudgetExceeded && res.Status != event.StatusMaxSteps) {
		return
	}
	own := r.limits()
	s := chainSpent(r.chain())
	var msg string
	switch {
	case res.Status == event.StatusMaxSteps && t.MaxSteps > 0 && s.Steps+res.Steps >= t.MaxSteps &&
		(own.MaxSteps <= 0 || res.Steps < own.MaxSteps):
		msg = fmt.Sprintf("reached limits.total.max_steps (%d): %s in %s, %d in this one", t.MaxSteps, counted(s.Steps, "step"), earlierRuns(s.Runs), res.Steps)
	case res.Status == event.StatusBudgetExceeded && t.MaxTokens > 0 && s.Tokens+res.Tokens.Input+res.Tokens.Output >= t.MaxTokens &&
		(own.MaxTokens <= 0 || res.Tokens.Input+res.Tokens.Output < own.MaxTokens):
		msg = fmt.Sprintf("reached limits.total.max_tokens (%d): %s in %s, %d in this one", t.MaxTokens, counted(int(s.Tokens), "token"), earlierRuns(s.Runs), res.Tokens.Input+res.Tokens.Output)
	case res.Status == event.StatusBudgetExceeded && t.MaxCostUSD > 0 && s.CostUSD != nil && res.CostUSD != nil &&
		*s.CostUSD+*res.CostUSD >= t.MaxCostUSD && (own.MaxCostUSD <= 0 || *res.CostUSD < own.MaxCostUSD):
		msg = fmt.Sprintf("reached limits.total.max_cost_usd (%s): %s in %s, %s in this one",
			event.FormatCost(t.MaxCostUSD), event.FormatCost(*s.CostUSD), earlierRuns(s.Runs), event.FormatCost(*res.CostUSD))
	default:
		return
	}
	res.Err = &runner.Error{Class: res.RunError().Class, Message: msg}
}

// keepTranscript records the conversation continued, unchanged, in this
// run's history when no session ran (a total already used up): the run
// can be continued in its turn, and its successor still sees the whole
// chain's spending.
func (r *execRun) keepTranscript() {
	c := r.continued
	if c == nil || r.history == nil {
		return
	}
	t := c.history.Transcript
	_ = r.history.Record(runner.HistoryRecord{Kind: runner.HistorySystem, System: t.System})
	if len(t.Messages) > 0 {
		_ = r.history.Record(runner.HistoryRecord{Kind: runner.HistoryMessages, Messages: t.Messages})
	}
}

// earlierRuns is "the earlier run" or "the 2 earlier runs".
func earlierRuns(n int) string {
	if n == 1 {
		return "the earlier run"
	}
	return fmt.Sprintf("the %d earlier runs", n)
}

// counted is "1 step", "2 steps".
func counted(n int, noun string) string { return fmt.Sprintf("%d %s%s", n, noun, plural(n)) }
