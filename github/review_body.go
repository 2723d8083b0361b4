package github

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/seed43ef5acb/runner/runner/report"
)

// reviewMarkerPrefix starts the hidden marker of a task's live review:
// <!-- runner:review task=NAME commit=SHA event=EVENT -->. A review the
// runner retired carries retiredMarkerPrefix instead, so it is never
// taken for the live one again.
const (
	reviewMarkerPrefix  = markerPrefix + "review "
	retiredMarkerPrefix = markerPrefix + "review-retired "
)

// taskField is the marker's task name with the characters that would end
// the HTML comment or a field replaced (as in Marker).
func taskField(task string) string {
	return strings.NewReplacer("--", "-", ">", "_", "\n", " ", "\r", " ", " ", "_").Replace(task)
}

// ReviewMarker is the hidden first line of the task's review of commit,
// asked with event (the verdict's, even when GitHub gave it another).
func ReviewMarker(task, commit, event string) string {
	return fmt.Sprintf("%stask=%s commit=%s event=%s -->", reviewMarkerPrefix, taskField(task), commit, event)
}

// reviewMarkerRE reads a live review's marker.
var reviewMarkerRE = regexp.MustCompile(`^<!-- runner:review task=(\S*) commit=(\S*) event=(\S*) -->`)

// parseReviewMarker reads the marker at the start of a review body: the
// task field, commit and event; ok is false when the body has none.
func parseReviewMarker(body string) (task, commit, event string, ok bool) {
	m := reviewMarkerRE.FindStringSubmatch(strings.TrimSpace(body))
	if m == nil {
		return "", "", "", false
	}
	return m[1], m[2], m[3], true
}

// headline is the review body's heading for the event as posted.
func headline(event string) string {
	switch event {
	case ReviewApprove:
		return "✅ runner review: approved"
	case ReviewRequestChanges:
		return "🔴 runner review: changes requested"
	}
	return "💬 runner review"
}

// Body is the review body: the marker, a heading for event (the event
// as posted), the summary, the counts, note (why the event or the line
// comments differ from the plan; "" for none), the findings outside the
// diff, and the footer. Model-written text has its @mentions defused. It
// is cut to CommentLimit, the marker and counts kept.
func (p ReviewPlan) Body(event, note string) string {
	var b strings.Builder
	b.WriteString(ReviewMarker(p.Task, p.Commit, p.Event) + "\n")
	fmt.Fprintf(&b, "### %s\n\n", headline(event))
	if p.Summary != "" {
		b.WriteString(report.NoMentions(p.Summary) + "\n\n")
	}
	b.WriteString(p.counts() + "\n\n")
	note = strings.TrimSpace(p.Note + " " + note)
	if note != "" {
		b.WriteString("> " + strings.ReplaceAll(strings.TrimSpace(note), "\n", "\n> ") + "\n\n")
	}
	for _, sec := range []struct {
		title  string
		capped bool
	}{{"Outside the diff", false}, {fmt.Sprintf("More findings on the changed lines (a review carries at most %d line comments)", MaxLineComments), true}} {
		var items []string
		for _, o := range p.Outside {
			if o.Capped == sec.capped {
				items = append(items, outsideItem(o))
			}
		}
		if len(items) > 0 {
			b.WriteString("#### " + sec.title + "\n\n" + strings.Join(items, "") + "\n")
		}
	}
	if p.Footer != "" {
		b.WriteString("---\n" + p.Footer + "\n")
	}
	return FitComment(strings.TrimRight(b.String(), "\n")+"\n", CommentLimit)
}

// counts says how many findings went where.
func (p ReviewPlan) counts() string {
	n, in := len(p.Comments)+len(p.Outside), len(p.Comments)
	capped := 0
	for _, o := range p.Outside {
		if o.Capped {
			capped++
		}
	}
	if capped > 0 {
		s := fmt.Sprintf("%s: %d on the changed lines as line comments (the most severe; a review carries at most %d), %d more on the changed lines listed below",
			plural(n, "finding"), in, MaxLineComments, capped)
		if out := len(p.Outside) - capped; out > 0 {
			s += fmt.Sprintf(", %d outside the diff (below)", out)
		}
		return s + "."
	}
	switch {
	case n == 0:
		return "No findings."
	case len(p.Outside) == 0:
		return fmt.Sprintf("%s, all on the changed lines (see the line comments).", plural(n, "finding"))
	case in == 0:
		return fmt.Sprintf("%s, none on the changed lines: listed below.", plural(n, "finding"))
	}
	return fmt.Sprintf("%s: %d on the changed lines (see the line comments), %d outside the diff (below).", plural(n, "finding"), in, len(p.Outside))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// outsideItem is one finding of the body's list, its suggestion as a
// code block under it (GitHub applies suggestion blocks only in line
// comments).
func outsideItem(o Outside) string {
	x := o.Finding
	from, to := x.Lines()
	where := fmt.Sprintf("%s:%d", x.File, from)
	if to != from {
		where += fmt.Sprintf("-%d", to)
	}
	line := fmt.Sprintf("- %s **%s** `%s` (%s): %s\n", severityIcon(x.Severity), severityText(x.Severity),
		strings.ReplaceAll(where, "`", "'"), o.Reason, report.NoMentions(oneLineText(x.Message)))
	if !x.HasSuggestion {
		return line
	}
	block := fenced("", x.Suggestion)
	return line + "\n  Suggested replacement:\n\n  " + strings.ReplaceAll(block, "\n", "\n  ") + "\n\n"
}

// oneLineText joins a message's lines with spaces, for a list item.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// RetiredBody is the body an earlier review gets once a newer one replaces
// it: a retired marker and a link to the newer review.
func RetiredBody(task, commit, newURL string) string {
	short := commit
	if len(short) > 12 {
		short = short[:12]
	}
	return fmt.Sprintf("%stask=%s commit=%s -->\n_Superseded by [a newer review](%s) of this task; this one was of commit `%s`._\n",
		retiredMarkerPrefix, taskField(task), commit, newURL, short)
}

// SummaryMarkdown is the review as a step summary section, for when it
// could not be posted (a read-only token): the body, then every line
// comment as file:line with its text.
func (p ReviewPlan) SummaryMarkdown(why string) string {
	var b strings.Builder
	b.WriteString("## runner review (not posted)\n\n")
	fmt.Fprintf(&b, "> %s\n\n", strings.ReplaceAll(why, "\n", " "))
	body := p.Body(p.Event, "")
	if _, rest, ok := strings.Cut(body, "\n"); ok { // without the marker
		body = rest
	}
	b.WriteString(body + "\n")
	if len(p.Comments) > 0 {
		b.WriteString("#### On the changed lines\n\n")
		for _, c := range p.Comments {
			where := fmt.Sprintf("%s:%d", c.Path, c.Line)
			if c.StartLine > 0 {
				where = fmt.Sprintf("%s:%d-%d", c.Path, c.StartLine, c.Line)
			}
			fmt.Fprintf(&b, "**`%s`**\n\n%s\n\n", strings.ReplaceAll(where, "`", "'"), c.Body)
		}
	}
	return b.String()
}
