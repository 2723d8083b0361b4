package github

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/internal/golden"
)

// reviewOutput is a structured output with findings inside and outside
// the diff of reviewFiles.
const reviewOutput = `{"verdict":"request_changes","summary":"Two problems; ping @alice.","findings":[
 {"file":"main.go","line":12,"severity":"error","message":"err is ignored","suggestion":"if err != nil {\n\treturn err\n}"},
 {"file":"./main.go","line":14,"end_line":15,"severity":"warning","message":"this loop never ends"},
 {"file":"main.go","line":40,"severity":"info","message":"unchanged code: rename x","suggestion":"y := 1"},
 {"file":"util/old.go","line":3,"severity":"warning","message":"file not in the PR"},
 {"file":"logo.png","line":1,"message":"binary"},
 {"file":"main.go","line":13,"end_line":21,"severity":"error","message":"spans two hunks"},
 {"file":"main.go","line":20,"severity":"info","message":"delete this line","suggestion":""}
]}`

func reviewFiles() map[string]FileDiff {
	return map[string]FileDiff{
		"main.go":  {Path: "main.go", Status: "modified", Hunks: []Hunk{{10, 6}, {20, 3}}},
		"logo.png": {Path: "logo.png", Status: "added", NoPatch: true},
	}
}

func TestParseFindings(t *testing.T) {
	f, err := ParseFindings([]byte(reviewOutput))
	if err != nil {
		t.Fatal(err)
	}
	if f.Verdict != "request_changes" || len(f.Findings) != 7 || f.Findings[1].File != "main.go" ||
		!f.Findings[0].HasSuggestion || f.Findings[1].HasSuggestion || !f.Findings[6].HasSuggestion {
		t.Errorf("findings %+v", f)
	}
	bad := []struct{ in, err string }{
		{``, "no structured output"},
		{`{"verdict":"approve","findings":[{"file":"a.go","line":0,"message":"m"}]}`, "findings[0] (a.go): line 0"},
		{`{"findings":[{"file":"","line":2,"message":"m"}]}`, "findings[0] has no file"},
		{`{"findings":[{"file":"a.go","line":2,"message":" "}]}`, "findings[0] (a.go:2) has no message"},
		{`{"findings":"none"}`, "structured output"},
	}
	for _, b := range bad {
		if _, err := ParseFindings([]byte(b.in)); err == nil || !strings.Contains(err.Error(), b.err) {
			t.Errorf("%s: err %v, want %q", b.in, err, b.err)
		}
	}
}

func TestEventOf(t *testing.T) {
	for verdict, want := range map[string]string{"approve": ReviewApprove, "APPROVED": ReviewApprove,
		"request_changes": ReviewRequestChanges, "comment": ReviewComment, "": ReviewComment, "maybe": ReviewComment} {
		if got := EventOf(verdict); got != want {
			t.Errorf("EventOf(%q) = %s, want %s", verdict, got, want)
		}
	}
}

// TestPlanReview: a finding whose whole range lies in one hunk becomes a
// line comment (a range: start_line and line); the others go into the
// body with their reason.
func TestPlanReview(t *testing.T) {
	f, err := ParseFindings([]byte(reviewOutput))
	if err != nil {
		t.Fatal(err)
	}
	p := PlanReview("review", "abc123", f, reviewFiles())
	if p.Event != ReviewRequestChanges {
		t.Errorf("event %s", p.Event)
	}
	want := []LineComment{
		{Path: "main.go", Line: 12, Body: "🛑 **error**: err is ignored\n\n```suggestion\nif err != nil {\n\treturn err\n}\n```"},
		{Path: "main.go", StartLine: 14, Line: 15, Body: "⚠️ **warning**: this loop never ends"},
		{Path: "main.go", Line: 20, Body: "ℹ️ **info**: delete this line\n\n```suggestion\n```"},
	}
	if diff := cmp.Diff(want, p.Comments); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
	var reasons []string
	for _, o := range p.Outside {
		reasons = append(reasons, o.Finding.File+": "+o.Reason)
	}
	wantReasons := []string{"main.go: not in the diff", "util/old.go: file not in the pull request",
		"logo.png: GitHub shows no diff of the file: binary or too large", "main.go: range not within one hunk of the diff"}
	if diff := cmp.Diff(wantReasons, reasons); diff != "" {
		t.Errorf("outside (-want +got):\n%s", diff)
	}
}

// TestSuggestionFence: a suggestion holding a code fence gets a longer
// fence, so the block is not closed early.
func TestSuggestionFence(t *testing.T) {
	got := commentBody(Finding{Severity: "info", Message: "doc", Suggestion: "see\n```go\nx\n```\n", HasSuggestion: true})
	want := "ℹ️ **info**: doc\n\n````suggestion\nsee\n```go\nx\n```\n````"
	if got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
}

func TestReviewMarkerRoundTrip(t *testing.T) {
	m := ReviewMarker("my task-->x", "abc", ReviewApprove)
	task, commit, event, ok := parseReviewMarker(m + "\nbody")
	if !ok || task != taskField("my task-->x") || commit != "abc" || event != ReviewApprove || strings.Count(m, "-->") != 1 {
		t.Errorf("marker %q parsed as %q %q %q %v", m, task, commit, event, ok)
	}
	if _, _, _, ok := parseReviewMarker(RetiredBody("t", "abc", "u")); ok {
		t.Error("a retired review's body reads as a live marker")
	}
	if _, _, _, ok := parseReviewMarker("text\n" + m); ok {
		t.Error("a marker not at the start counts")
	}
}

// TestGoldenReviewBodies: the review body (findings outside the diff,
// suggestion under one, @mentions defused, a refused APPROVE noted), the
// retired body and the step summary form.
func TestGoldenReviewBodies(t *testing.T) {
	f, err := ParseFindings([]byte(reviewOutput))
	if err != nil {
		t.Fatal(err)
	}
	p := PlanReview("review-change", "0123456789abcdef0123456789abcdef01234567", f, reviewFiles())
	p.Footer = "<sub>runner · task `review-change` · [run](https://github.com/o/r/actions/runs/9) · model `gpt-4.1-mini`</sub>"
	clean := PlanReview("review-change", "0123456789abcdef", Findings{Verdict: "approve"}, nil)
	tests := []struct{ name, got string }{
		{"review-body.md", p.Body(p.Event, "")},
		{"review-body-refused.md", p.Body(ReviewComment, "GitHub refused APPROVE (Unprocessable Entity: Can not approve your own pull request): the review is posted as a comment.")},
		{"review-body-clean.md", clean.Body(clean.Event, "")},
		{"review-retired.md", RetiredBody("review-change", "0123456789abcdef0123456789abcdef01234567", "https://github.com/o/r/pull/5#pullrequestreview-8")},
		{"review-summary.md", p.SummaryMarkdown("The token cannot write reviews (a pull request from a fork gets a read-only one): 403 Resource not accessible by integration.")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { golden.Check(t, filepath.Join("testdata", "golden", tt.name), []byte(tt.got)) })
	}
	if strings.Contains(p.Body(p.Event, ""), "@alice") {
		t.Error("the summary's @mention pings")
	}
}

// FuzzPlanReview: any structured output either fails to parse with an
// error or plans a review whose every finding is a line comment inside a
// hunk or a body finding, none lost, and whose body keeps its marker.
func FuzzPlanReview(f *testing.F) {
	f.Add(reviewOutput)
	f.Add(`{"verdict":"approve","findings":[{"file":"main.go","line":11,"end_line":9,"message":"m","suggestion":"` + "```" + `"}]}`)
	f.Add(`{"findings":[{"file":"../x","line":1,"message":"@team look"}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		fs, err := ParseFindings([]byte(raw))
		if err != nil {
			return
		}
		files := reviewFiles()
		p := PlanReview("t", "abc", fs, files)
		if len(p.Comments)+len(p.Outside) != len(fs.Findings) {
			t.Fatalf("%d comments + %d outside for %d findings", len(p.Comments), len(p.Outside), len(fs.Findings))
		}
		if len(p.Comments) > MaxLineComments {
			t.Fatalf("%d line comments, over MaxLineComments", len(p.Comments))
		}
		for _, c := range p.Comments {
			from := c.Line
			if c.StartLine > 0 {
				from = c.StartLine
			}
			if _, ok := files[c.Path].Hunk(from, c.Line); !ok {
				t.Fatalf("comment %+v outside the diff", c)
			}
		}
		if body := p.Body(p.Event, ""); !strings.HasPrefix(body, ReviewMarker("t", "abc", p.Event)) {
			t.Fatalf("body lost its marker:\n%s", body)
		}
	})
}

// TestPlanReviewFilesUnread: when the files API failed (nil files), the
// findings go to the body saying so, not that their file is not in the
// pull request; an empty pull request still says that.
func TestPlanReviewFilesUnread(t *testing.T) {
	f := Findings{Verdict: "comment", Findings: []Finding{{File: "a.go", Line: 3, Message: "m"}}}
	for _, c := range []struct {
		files map[string]FileDiff
		want  string
	}{{nil, "the pull request's files could not be read"}, {map[string]FileDiff{}, "file not in the pull request"}} {
		p := PlanReview("t", "abc", f, c.files)
		if len(p.Outside) != 1 || !strings.HasPrefix(p.Outside[0].Reason, c.want) {
			t.Errorf("files %v: outside %+v, want the reason %q", c.files, p.Outside, c.want)
		}
	}
}
