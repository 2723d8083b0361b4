package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// TestMarkdownDeliveryFailed: a run whose pull request could not be opened
// says so under the summary, with the URL of the pushed branch's comment
// that was made, and its heading is not a green tick.
func TestMarkdownDeliveryFailed(t *testing.T) {
	r := Report{Task: "fix", Status: event.StatusDeliveryFailed,
		Error: &event.RunError{Class: event.ClassDelivery, Message: "changes ready, pull request could not be opened: POST pulls: 500 Internal Server Error"},
		Delivery: []event.Publish{{Target: event.PublishPush, OK: true},
			{Target: event.PublishPullRequest, Error: "POST pulls: 500 Internal Server Error"},
			{Target: event.PublishLabels, Error: "403", URL: "https://github.com/o/r/pull/3"}}}
	md := r.Markdown(MarkdownOptions{})
	for _, want := range []string{"📦 runner: fix — delivery failed", "changes ready, pull request could not be opened: POST pulls: 500",
		"- ✅ push\n", "- ❌ pull request (the error above)", "- ❌ labels failed: 403",
		"(made: https://github.com/o/r/pull/3)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "✅ runner") {
		t.Errorf("green heading:\n%s", md)
	}
}

// TestMarkdownVerdict: a review asking for changes heads the report with
// its verdict, and the structured output is shown open, not collapsed.
func TestMarkdownVerdict(t *testing.T) {
	r := Report{Task: "review", Status: event.StatusSuccess,
		StructuredOutput: json.RawMessage(`{"verdict":"request_changes","findings":[{"file":"a.go","line":3}]}`)}
	md := r.Markdown(MarkdownOptions{})
	if !strings.HasPrefix(md, "### 🔴 runner: review — request changes") {
		t.Errorf("heading:\n%s", md)
	}
	if strings.Contains(md, "<details><summary>Structured output") || !strings.Contains(md, `"verdict": "request_changes"`) {
		t.Errorf("structured output hidden:\n%s", md)
	}
	if !strings.Contains(md, "| **Verdict** | 🔴 `request_changes` |") {
		t.Errorf("no verdict row:\n%s", md)
	}
}
