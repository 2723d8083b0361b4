package report

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Verdict is the "verdict" string of the structured output (a review's
// approve, comment or request_changes), "" when there is none.
func (r Report) Verdict() string {
	var v struct {
		Verdict string `json:"verdict"`
	}
	if len(r.StructuredOutput) == 0 || json.Unmarshal(r.StructuredOutput, &v) != nil {
		return ""
	}
	return strings.TrimSpace(v.Verdict)
}

// verdictIcon is the emoji of a review verdict.
func verdictIcon(v string) string {
	switch strings.ToLower(v) {
	case "approve", "approved", "pass", "lgtm":
		return "✅"
	case "request_changes", "changes_requested", "reject", "fail":
		return "🔴"
	}
	return "💬"
}

// deliveryBlock lists what was published and what could not be, under the
// summary table: a failed call is never cut from the report.
func (r Report) deliveryBlock() string {
	if len(r.Delivery) == 0 {
		return ""
	}
	var b strings.Builder
	for _, d := range r.Delivery {
		what := strings.ReplaceAll(string(d.Target), "_", " ")
		if d.Branch != "" && d.Commit != "" {
			what += fmt.Sprintf(" of `%s` at %.12s", cell(d.Branch), d.Commit)
		}
		switch {
		case d.OK && d.URL != "":
			fmt.Fprintf(&b, "- ✅ %s: %s\n", what, d.URL)
		case d.OK:
			fmt.Fprintf(&b, "- ✅ %s\n", what)
		case r.Error != nil && d.Error != "" && strings.Contains(r.Error.Message, d.Error):
			fmt.Fprintf(&b, "- ❌ %s (the error above)\n", what)
		default:
			msg := noMentions(cell(d.Error))
			if len(msg) > 500 {
				msg = cutBytes(msg, 500) + "…"
			}
			line := fmt.Sprintf("- ❌ %s failed: %s", what, msg)
			if d.URL != "" {
				line += " (made: " + d.URL + ")"
			}
			b.WriteString(line + "\n")
		}
	}
	return b.String() + "\n"
}
