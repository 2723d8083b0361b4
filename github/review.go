package github

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/seed43ef5acb/runner/runner/report"
)

// Review events (the Reviews API's "event").
const (
	ReviewApprove        = "APPROVE"
	ReviewRequestChanges = "REQUEST_CHANGES"
	ReviewComment        = "COMMENT"
)

// Finding is one finding of a review task's structured output: a file
// (work-tree-relative slash path), a line of its head version (1-based),
// optionally the last line of a multi-line range (EndLine, or StartLine
// before Line), a severity (info, warning, error), a message, and a
// replacement for the lines (Suggestion, a `suggestion` block in a line
// comment) when HasSuggestion.
type Finding struct {
	File          string `json:"file"`
	Line          int    `json:"line"`
	StartLine     int    `json:"start_line,omitempty"`
	EndLine       int    `json:"end_line,omitempty"`
	Severity      string `json:"severity,omitempty"`
	Message       string `json:"message"`
	Suggestion    string `json:"suggestion,omitempty"`
	HasSuggestion bool   `json:"-"`
}

// Lines is the finding's range of head-side lines, first to last.
func (f Finding) Lines() (from, to int) {
	from, to = f.Line, f.Line
	if f.EndLine > f.Line {
		to = f.EndLine
	}
	if f.StartLine > 0 && f.StartLine < f.Line {
		from = f.StartLine
	}
	return from, to
}

// Findings is what review mode reads from a structured output: the
// verdict (approve, comment, request_changes), an optional summary and the
// findings.
type Findings struct {
	Verdict  string    `json:"verdict"`
	Summary  string    `json:"summary"`
	Findings []Finding `json:"findings"`
}

// ParseFindings reads a structured output (a JSON object) for review
// mode: "verdict" and "findings" (each with file, line and message; a
// "suggestion" key, even an empty string, is a suggestion: an empty one
// deletes the lines), "summary" when present. Other keys are ignored.
// Errors say which finding is malformed.
func ParseFindings(raw json.RawMessage) (Findings, error) {
	var f Findings
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return f, fmt.Errorf("github: review: the run gave no structured output")
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, fmt.Errorf("github: review: structured output: %w", err)
	}
	var keys struct {
		Findings []map[string]json.RawMessage `json:"findings"`
	}
	_ = json.Unmarshal(raw, &keys)
	for i := range f.Findings {
		x := &f.Findings[i]
		if i < len(keys.Findings) {
			_, x.HasSuggestion = keys.Findings[i]["suggestion"]
		}
		x.File = strings.TrimPrefix(path.Clean(strings.TrimPrefix(x.File, "./")), "/")
		switch {
		case x.File == "" || x.File == ".":
			return f, fmt.Errorf("github: review: findings[%d] has no file", i)
		case x.Line < 1:
			return f, fmt.Errorf("github: review: findings[%d] (%s): line %d: give a line number from 1", i, x.File, x.Line)
		case strings.TrimSpace(x.Message) == "":
			return f, fmt.Errorf("github: review: findings[%d] (%s:%d) has no message", i, x.File, x.Line)
		}
	}
	return f, nil
}

// EventOf maps a verdict to the review event: approve → APPROVE,
// request_changes → REQUEST_CHANGES, anything else → COMMENT. Spellings
// GitHub itself uses (APPROVED, CHANGES_REQUESTED) are accepted too.
func EventOf(verdict string) string {
	switch strings.ToLower(strings.TrimSpace(verdict)) {
	case "approve", "approved":
		return ReviewApprove
	case "request_changes", "changes_requested":
		return ReviewRequestChanges
	}
	return ReviewComment
}

// stateOf is the review state GitHub gives a review posted with event.
func stateOf(event string) string {
	switch event {
	case ReviewApprove:
		return "APPROVED"
	case ReviewRequestChanges:
		return "CHANGES_REQUESTED"
	}
	return "COMMENTED"
}

// LineComment is one line comment of a review, on side RIGHT of the head
// commit: Line, and StartLine for a range (0 for one line).
type LineComment struct {
	Path      string
	StartLine int
	Line      int
	Body      string
}

// Outside is a finding that goes into the review body, and why.
type Outside struct {
	Finding Finding
	Reason  string // "not in the diff", "file not in the pull request", …
	// Capped is a finding on the changed lines left out of the line
	// comments by MaxLineComments.
	Capped bool
}

// MaxLineComments is the most line comments one review carries. A model
// can report hundreds of findings; a review with that many line comments
// buries the pull request's conversation (and GitHub may refuse or time
// out creating it), so the most severe MaxLineComments stay line comments
// (errors, then warnings, then the rest, each in the order found) and the
// others are listed in the body, each with the reason.
const MaxLineComments = 50

// ReviewPlan is the review to post: the event, the line comments and the
// findings for the body.
type ReviewPlan struct {
	Task   string
	Commit string // the head commit the lines refer to
	Event  string // to post: the verdict's, unless the caller changed it
	// Requested is the verdict's event (Event may differ: the spec's
	// approve: false).
	Requested string
	Summary   string
	Comments  []LineComment
	Outside   []Outside
	// Footer is the provenance line (run link, model, cost), Markdown.
	Footer string
	// Note is said in the body above any note of the post itself (the
	// spec's approve: false turning an approval into a comment).
	Note string
	// inline are the findings of Comments, in the same order.
	inline []Finding
}

// PlanReview sorts the findings into line comments (a finding whose whole
// range lies in one hunk of its file's diff) and the body (the rest, each
// with its reason). files are the pull request's files by head path
// (PullRequestFiles); nil when they could not be read, which is then each
// finding's reason, not "file not in the pull request".
func PlanReview(task, commit string, f Findings, files map[string]FileDiff) ReviewPlan {
	p := ReviewPlan{Task: task, Commit: commit, Event: EventOf(f.Verdict), Requested: EventOf(f.Verdict), Summary: strings.TrimSpace(f.Summary)}
	for _, x := range f.Findings {
		from, to := x.Lines()
		fd, ok := files[x.File]
		reason := ""
		switch {
		case files == nil:
			reason = "the pull request's files could not be read, so no line could take a comment"
		case !ok:
			reason = "file not in the pull request"
		case fd.NoPatch:
			reason = "GitHub shows no diff of the file: binary or too large"
		default:
			if _, in := fd.Hunk(from, to); !in {
				reason = "not in the diff"
				if from != to {
					reason = "range not within one hunk of the diff"
				}
			}
		}
		if reason != "" {
			p.Outside = append(p.Outside, Outside{Finding: x, Reason: reason})
			continue
		}
		c := LineComment{Path: x.File, Line: to, Body: commentBody(x)}
		if from != to {
			c.StartLine = from
		}
		p.Comments, p.inline = append(p.Comments, c), append(p.inline, x)
	}
	return p.capComments(MaxLineComments)
}

// capComments keeps the limit most severe line comments (in the order found)
// and moves the rest into the body, marked Capped.
func (p ReviewPlan) capComments(limit int) ReviewPlan {
	if len(p.Comments) <= limit {
		return p
	}
	order := make([]int, len(p.inline))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return severityRank(p.inline[order[a]].Severity) < severityRank(p.inline[order[b]].Severity)
	})
	keep := make([]bool, len(p.inline))
	for _, i := range order[:limit] {
		keep[i] = true
	}
	comments, inline := p.Comments, p.inline
	p.Comments, p.inline = nil, nil
	reason := fmt.Sprintf("on the changed lines, over the %d line comments a review carries", limit)
	for i, x := range inline {
		if keep[i] {
			p.Comments, p.inline = append(p.Comments, comments[i]), append(p.inline, x)
		} else {
			p.Outside = append(p.Outside, Outside{Finding: x, Reason: reason, Capped: true})
		}
	}
	return p
}

// severityRank orders severities for MaxLineComments: errors (0), then
// warnings (1), then the rest (2), as severityIcon groups them.
func severityRank(s string) int {
	switch severityIcon(s) {
	case "🛑":
		return 0
	case "⚠️":
		return 1
	}
	return 2
}

// severityIcon is the mark of a finding's severity.
func severityIcon(s string) string {
	switch strings.ToLower(s) {
	case "error", "critical", "high":
		return "🛑"
	case "warning", "medium":
		return "⚠️"
	}
	return "ℹ️"
}

// severityText is the finding's severity as shown ("note" when unset).
func severityText(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return "note"
	}
	return s
}

// commentBody is a line comment's Markdown: severity and message, then
// the suggestion block.
func commentBody(x Finding) string {
	body := fmt.Sprintf("%s **%s**: %s", severityIcon(x.Severity), severityText(x.Severity), report.NoMentions(strings.TrimSpace(x.Message)))
	if x.HasSuggestion {
		body += "\n\n" + fenced("suggestion", x.Suggestion)
	}
	return FitComment(body, CommentLimit)
}

// fenced puts text in a code block of the info string, with a fence
// longer than any run of backticks in text.
func fenced(info, text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	text = strings.TrimSuffix(text, "\n")
	if text != "" {
		text += "\n"
	}
	return fence + info + "\n" + text + fence
}
