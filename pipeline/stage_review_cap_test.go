package pipeline

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestExecReviewCapsLineComments: 60 findings on the changed lines (55
// notes, then 5 errors) make one review with github.MaxLineComments (50)
// line comments, every error among them, and the other 10 listed in the
// body, each with the reason; the counts, the publish event and
// result.json say so.
func TestExecReviewCapsLineComments(t *testing.T) {
	d := newReviewRun(t)
	d.stubFiles(1)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/reviews", githubtest.Page([]any{}, 1, 1))
	var got map[string]any
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Capture(t, &got, githubtest.JSON(200, map[string]any{
		"id": 71, "state": "CHANGES_REQUESTED", "html_url": "https://github.com/octo/hello/pull/5#pullrequestreview-71"})))
	var findings []string
	for i := range 60 {
		sev := "info"
		if i >= 55 {
			sev = "error"
		}
		findings = append(findings, fmt.Sprintf(`{"file":"main.go","line":%d,"severity":%q,"message":"finding %d"}`, 2+i%3, sev, i))
	}
	if err := d.exec(t, `{"verdict":"request_changes","findings":[`+strings.Join(findings, ",")+`]}`); err != nil {
		t.Fatalf("%v\n%s", err, d.stderr.String())
	}
	comments, _ := got["comments"].([]any)
	if len(comments) != github.MaxLineComments || github.MaxLineComments != 50 {
		t.Fatalf("%d line comments posted, want %d (50)", len(comments), github.MaxLineComments)
	}
	var inline []string
	for _, c := range comments {
		inline = append(inline, c.(map[string]any)["body"].(string))
	}
	for i := 55; i < 60; i++ {
		if want := fmt.Sprintf("🛑 **error**: finding %d", i); !strings.Contains(strings.Join(inline, "\n"), want) {
			t.Errorf("the error %q is not a line comment", want)
		}
	}
	body, _ := got["body"].(string)
	for _, s := range []string{
		"60 findings: 50 on the changed lines as line comments (the most severe; a review carries at most 50), 10 more on the changed lines listed below.",
		"#### More findings on the changed lines (a review carries at most 50 line comments)",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("review body lacks %q:\n%s", s, body)
		}
	}
	if n := strings.Count(body, "(on the changed lines, over the 50 line comments a review carries): finding "); n != 10 {
		t.Errorf("%d findings listed in the body with the reason, want 10:\n%s", n, body)
	}
	for i := 45; i < 55; i++ { // the last notes are the ones over the cap
		if !strings.Contains(body, fmt.Sprintf("finding %d\n", i)) {
			t.Errorf("finding %d is in neither the line comments nor the body", i)
		}
	}
	wantReview := &event.PublishedReview{URL: "https://github.com/octo/hello/pull/5#pullrequestreview-71", Event: "REQUEST_CHANGES", Inline: 50, InBody: 10}
	if pubs := d.reviewPublish(t, event.StatusSuccess); len(pubs) != 1 || !cmp.Equal(pubs[0].Review, wantReview) {
		t.Errorf("publish events %+v, want review %+v", pubs, wantReview)
	}
	if fin := d.result(t); !cmp.Equal(fin.Review, wantReview) {
		t.Errorf("result.json review %+v", fin.Review)
	}
}
