package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
)

// MarkdownOptions shape the Markdown document.
type MarkdownOptions struct {
	// Title is the heading text; default "runner: <task>".
	Title string
	// HeadingLevel of the title (1-6); default 3. Sections are one deeper.
	HeadingLevel int
	// Patch is the unified diff shown in a collapsed <details> section; ""
	// for none. It may be the start of a larger patch (ReadPatchExcerpt):
	// PatchSize then says how large the whole is.
	Patch string
	// PatchSize is the whole patch's size in bytes when Patch is an
	// excerpt of it; 0 (or len(Patch)) when Patch is the whole patch.
	PatchSize int64
	// MaxLen is the longest document in bytes (0: no limit). Sections that
	// do not fit are cut (final message, patch) or left out, in reverse order
	// of importance, with a note saying so; the heading, summary table, error
	// and footer are always kept. GitHub comments hold 65,536 characters.
	MaxLen int
	// Footer is appended last and always kept (a link to the run, a hidden
	// marker).
	Footer string
	// Redactor, when set, redacts every string of the report and the patch
	// before rendering.
	Redactor *event.Redactor
}

// section is a part of the document; cut shortens it to at most n bytes
// (nil: it cannot be shortened).
type section struct {
	name string
	text string
	cut  func(n int) (string, bool)
}

// Markdown renders the report as GitHub-flavoured Markdown.
func (r Report) Markdown(o MarkdownOptions) string {
	if o.Redactor != nil {
		r = r.redacted(o.Redactor)
		o.Patch = o.Redactor.Redact(o.Patch)
	}
	if o.HeadingLevel < 1 || o.HeadingLevel > 5 {
		o.HeadingLevel = 3
	}
	h := strings.Repeat("#", o.HeadingLevel+1)
	fixed := r.head(o) + r.summaryTable() + r.errorBlock() + r.denialsNote() + r.ignoredNote() + r.deliveryBlock()
	footer := ""
	if o.Footer != "" {
		footer = "\n" + strings.TrimRight(o.Footer, "\n") + "\n"
	}
	secs := []section{
		r.finalSection(h),
		r.structuredSection(),
		{name: "Changes", text: r.changesSection(h)},
		{name: "Checks", text: r.checksSection(h)},
		{name: "Denials", text: r.denialsSection(h)},
		{name: "Tools", text: r.toolsSection(h)},
		patchSection(o.Patch, o.PatchSize, r.Diff),
	}
	return layout(fixed, footer, secs, o.MaxLen)
}

// redacted returns a copy of r with every string redacted.
func (r Report) redacted(red *event.Redactor) Report {
	raw, err := json.Marshal(r)
	if err != nil {
		return r
	}
	var out Report
	if err := json.Unmarshal(red.RedactJSON(raw), &out); err != nil {
		return r
	}
	return out
}

// layout joins fixed, the sections that fit in maxLen, and footer.
func layout(fixed, footer string, secs []section, maxLen int) string {
	var b strings.Builder
	b.WriteString(fixed)
	if maxLen <= 0 {
		for _, s := range secs {
			b.WriteString(s.text)
		}
		b.WriteString(footer)
		return b.String()
	}
	const noteReserve = 200
	budget := maxLen - len(fixed) - len(footer) - noteReserve
	var cut, omitted []string
	for _, s := range secs {
		switch {
		case s.text == "":
		case len(s.text) <= budget:
			b.WriteString(s.text)
			budget -= len(s.text)
		case s.cut != nil && budget >= 120:
			t, ok := s.cut(budget)
			if ok {
				b.WriteString(t)
				budget -= len(t)
				cut = append(cut, s.name)
				continue
			}
			omitted = append(omitted, s.name)
		default:
			omitted = append(omitted, s.name)
		}
	}
	if len(cut)+len(omitted) > 0 {
		b.WriteString(truncationNote(cut, omitted))
	}
	b.WriteString(footer)
	return b.String()
}

func truncationNote(cut, omitted []string) string {
	var parts []string
	if len(cut) > 0 {
		parts = append(parts, "shortened "+strings.Join(cut, ", "))
	}
	if len(omitted) > 0 {
		parts = append(parts, "left out "+strings.Join(omitted, ", "))
	}
	return "\n_Report cut to fit: " + strings.Join(parts, "; ") + ". The full report is in the run's artifacts._\n"
}

// statusIcon is the emoji of a status.
func statusIcon(status event.Status) string {
	switch status {
	case event.StatusSuccess:
		return "✅"
	case event.StatusFailed:
		return "❌"
	case event.StatusError:
		return "💥"
	case event.StatusCancelled:
		return "⏹️"
	case event.StatusBlocked:
		return "⛔"
	case event.StatusViolation:
		return "🚫"
	case event.StatusMaxSteps, event.StatusBudgetExceeded, event.StatusTimeout:
		return "⏱️"
	case event.StatusDeliveryFailed:
		return "📦"
	}
	return "⏳"
}

func (r Report) head(o MarkdownOptions) string {
	title := o.Title
	if title == "" {
		title = "runner"
		if r.Task != "" {
			title += ": " + r.Task
		}
	}
	status := strings.ReplaceAll(string(r.Status), "_", " ")
	if v := r.Verdict(); v != "" && r.Status == event.StatusSuccess {
		// A review that asks for changes is not a green tick.
		return fmt.Sprintf("%s %s %s — %s\n\n", strings.Repeat("#", o.HeadingLevel), verdictIcon(v), cell(title),
			strings.ReplaceAll(v, "_", " "))
	}
	return fmt.Sprintf("%s %s %s — %s\n\n", strings.Repeat("#", o.HeadingLevel), statusIcon(r.Status),
		cell(title), status)
}

func (r Report) summaryTable() string {
	var b strings.Builder
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| **%s** | %s |\n", k, v) }
	status := statusIcon(r.Status) + " " + string(r.Status)
	if r.ExitCode != nil {
		status += fmt.Sprintf(" (exit %d)", *r.ExitCode)
	}
	row("Status", status)
	if r.Model != "" {
		row("Model", code(r.Model))
	}
	row("Steps", fmt.Sprint(r.Steps))
	row("Tokens", tokensText(r.Tokens))
	cost := "unknown"
	if r.CostUSD != nil {
		cost = event.FormatCost(*r.CostUSD)
	}
	row("Cost", cost)
	row("Duration", event.FormatMS(r.DurationMS))
	if r.Diff != nil {
		row("Changes", diffText(len(r.Diff.Files), r.Diff.Additions, r.Diff.Deletions))
	}
	if w := r.IgnoredWritten; w != nil && w.Total > 0 {
		row("Ignored paths written", fmt.Sprintf("%s, not in the patch", countText(w.Total, "path", "paths")))
	}
	if len(r.Checks) > 0 {
		row("Checks", r.checksText())
	}
	if len(r.Denials) > 0 {
		row("Denials", fmt.Sprint(len(r.Denials)))
	}
	if v := r.Verdict(); v != "" {
		row("Verdict", verdictIcon(v)+" "+code(v))
	}
	b.WriteString("\n")
	return b.String()
}

func (r Report) errorBlock() string {
	if r.Error == nil {
		return ""
	}
	msg := noMentions(cell(r.Error.Message))
	if len(msg) > 1000 {
		msg = cutBytes(msg, 1000) + "…"
	}
	return fmt.Sprintf("**Error** (%s): %s\n\n", code(string(r.Error.Class)), msg)
}

// denialsNote says, above the final message and never cut, which calls
// the permissions refused: a model often claims to have done what a
// denied call would have done ("Removed notes.txt."). The first three are
// named; the Denials section lists each.
func (r Report) denialsNote() string {
	if len(r.Denials) == 0 {
		return ""
	}
	var names []string
	for i, d := range r.Denials {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(r.Denials)-3))
			break
		}
		rule := d.DecidedBy()
		if d.Rule != nil {
			rule = code(shorten(*d.Rule, 100))
		}
		names = append(names, fmt.Sprintf("%s %s (%s)", code(d.Tool), code(shorten(d.Pattern, 100)), rule))
	}
	what := "1 call was"
	if len(r.Denials) > 1 {
		what = fmt.Sprintf("%d calls were", len(r.Denials))
	}
	return fmt.Sprintf("**Denied**: %s refused by the permissions and did not run, whatever the final message says: %s.\n\n",
		what, noMentions(strings.Join(names, ", ")))
}

// checksText is "1/2 passed" over the last attempt of each check.
func (r Report) checksText() string {
	last := map[string]bool{}
	var names []string
	for _, c := range r.Checks {
		if _, ok := last[c.Name]; !ok {
			names = append(names, c.Name)
		}
		last[c.Name] = c.Passed
	}
	passed := 0
	for _, n := range names {
		if last[n] {
			passed++
		}
	}
	return fmt.Sprintf("%d/%d passed", passed, len(names))
}
