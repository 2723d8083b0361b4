package github

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cenkalti/backoff/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

const (
	reviewsPath = "/repos/o/r/pulls/5/reviews"
	botLogin    = "github-actions[bot]"
	headSHA     = "1111111111111111111111111111111111111111"
	oldSHA      = "0000000000000000000000000000000000000000"
)

func newReviewer(reg *githubtest.Registry) *Reviewer {
	return &Reviewer{Client: reg.Client(), Owner: "o", Repo: "r", Number: 5, Self: botLogin,
		BackOff: backoff.NewConstantBackOff(0)}
}

// reviewPlan is the plan of reviewOutput against reviewFiles at headSHA.
func reviewPlan(t *testing.T, output string) ReviewPlan {
	t.Helper()
	f, err := ParseFindings([]byte(output))
	if err != nil {
		t.Fatal(err)
	}
	return PlanReview("review", headSHA, f, reviewFiles())
}

// review is a review as the API lists it.
func review(id int64, login, body, state string) map[string]any {
	return map[string]any{"id": id, "user": map[string]any{"login": login}, "body": body, "state": state,
		"html_url": "https://github.com/o/r/pull/5#pullrequestreview-" + itoa(int(id))}
}

// TestReviewPostNew: no earlier review: one CreateReview whose body is
// exactly the plan's: commit, event from the verdict, line comments on
// side RIGHT (a range with start_line), suggestion blocks.
func TestReviewPostNew(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{}, 1, 1))
	var got map[string]any
	reg.Register(http.MethodPost, reviewsPath, githubtest.Capture(t, &got, githubtest.JSON(200, review(7, botLogin, "x", "CHANGES_REQUESTED"))))
	p := reviewPlan(t, reviewOutput)
	out, err := newReviewer(reg).Post(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"commit_id": headSHA, "event": "REQUEST_CHANGES", "body": p.Body(ReviewRequestChanges, ""),
		"comments": []any{
			map[string]any{"path": "main.go", "line": 12.0, "side": "RIGHT",
				"body": "🛑 **error**: err is ignored\n\n```suggestion\nif err != nil {\n\treturn err\n}\n```"},
			map[string]any{"path": "main.go", "start_line": 14.0, "start_side": "RIGHT", "line": 15.0, "side": "RIGHT",
				"body": "⚠️ **warning**: this loop never ends"},
			map[string]any{"path": "main.go", "line": 20.0, "side": "RIGHT", "body": "ℹ️ **info**: delete this line\n\n```suggestion\n```"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("create review request (-want +got):\n%s", diff)
	}
	if out != (ReviewOutcome{URL: "https://github.com/o/r/pull/5#pullrequestreview-7", ID: 7, Event: ReviewRequestChanges, Inline: 3, InBody: 4}) {
		t.Errorf("outcome %+v", out)
	}
}

// TestReviewVerdictEvents: each verdict is the review's event.
func TestReviewVerdictEvents(t *testing.T) {
	for verdict, event := range map[string]string{"approve": "APPROVE", "comment": "COMMENT", "request_changes": "REQUEST_CHANGES"} {
		t.Run(verdict, func(t *testing.T) {
			reg := githubtest.New(t, "/api/v3")
			reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{}, 1, 1))
			var got map[string]any
			reg.Register(http.MethodPost, reviewsPath, githubtest.Capture(t, &got, githubtest.JSON(200, review(7, botLogin, "x", stateOf(event)))))
			p := reviewPlan(t, `{"verdict":"`+verdict+`","findings":[]}`)
			out, err := newReviewer(reg).Post(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			if got["event"] != event || out.Event != event || got["comments"] != nil {
				t.Errorf("request %v, outcome %+v; want event %s and no comments", got, out, event)
			}
		})
	}
}

// TestReviewApproveRefused: GitHub refuses the APPROVE (422, the token's
// own pull request): the review is posted again as COMMENT, its body
// saying so, and the outcome carries the note.
func TestReviewApproveRefused(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{}, 1, 1))
	var first, second map[string]any
	reg.Register(http.MethodPost, reviewsPath, githubtest.Capture(t, &first, githubtest.JSON(422, map[string]any{
		"message": "Unprocessable Entity", "errors": []any{"Can not approve your own pull request"}})))
	reg.Register(http.MethodPost, reviewsPath, githubtest.Capture(t, &second, githubtest.JSON(200, review(7, botLogin, "x", "COMMENTED"))))
	p := reviewPlan(t, `{"verdict":"approve","findings":[{"file":"main.go","line":11,"message":"nit"}]}`)
	out, err := newReviewer(reg).Post(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	note := "GitHub refused APPROVE (Unprocessable Entity: Can not approve your own pull request): the review is posted as a comment."
	if first["event"] != "APPROVE" || second["event"] != "COMMENT" || second["body"] != p.Body(ReviewComment, note) ||
		len(second["comments"].([]any)) != 1 {
		t.Errorf("requests:\n%v\n%v", first, second)
	}
	if out.Event != ReviewComment || out.Note != note || out.Inline != 1 {
		t.Errorf("outcome %+v", out)
	}
}

// TestReviewLineCommentsRefused: GitHub refuses the line comments (the
// diff moved since it was read): the findings go into the body.
func TestReviewLineCommentsRefused(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{}, 1, 1))
	reg.Register(http.MethodPost, reviewsPath, githubtest.JSON(422, map[string]any{
		"message": "Unprocessable Entity", "errors": []any{"Line could not be resolved"}}))
	var got map[string]any
	reg.Register(http.MethodPost, reviewsPath, githubtest.Capture(t, &got, githubtest.JSON(200, review(7, botLogin, "x", "COMMENTED"))))
	p := reviewPlan(t, `{"verdict":"comment","findings":[{"file":"main.go","line":11,"message":"nit"}]}`)
	out, err := newReviewer(reg).Post(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := got["body"].(string)
	if got["comments"] != nil || !strings.Contains(body, "`main.go:11` (line comment refused): nit") ||
		!strings.Contains(body, "GitHub refused the line comments (Unprocessable Entity: Line could not be resolved)") {
		t.Errorf("request %v", got)
	}
	if out.Inline != 0 || out.InBody != 1 {
		t.Errorf("outcome %+v", out)
	}
}

// TestReviewRerunNewPush: the workflow runs again on a new push. The
// task's earlier review (found by its marker among the token's own
// reviews; a pasted marker in someone else's review is ignored) is
// retired after the new review is posted: its line comments deleted, its
// body replaced by a link to the new one, its verdict dismissed.
func TestReviewRerunNewPush(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	oldBody := ReviewMarker("review", oldSHA, ReviewRequestChanges) + "\nold findings"
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{
		review(3, "mallory", oldBody, "COMMENTED"),
		review(4, botLogin, oldBody, "CHANGES_REQUESTED"),
		review(5, botLogin, "<!-- runner:review task=other commit=x event=COMMENT -->", "COMMENTED"),
	}, 1, 1))
	var created, retired, dismissed map[string]any
	reg.Register(http.MethodPost, reviewsPath, githubtest.Capture(t, &created, githubtest.JSON(200, review(8, botLogin, "x", "CHANGES_REQUESTED"))))
	reg.Register(http.MethodGet, reviewsPath+"/4/comments", githubtest.Page([]any{
		map[string]any{"id": 41, "path": "main.go", "original_line": 3, "body": "old"},
		map[string]any{"id": 42, "path": "main.go", "original_line": 9, "body": "old 2"},
	}, 1, 1))
	reg.Register(http.MethodDelete, "/repos/o/r/pulls/comments/41", githubtest.JSON(204, nil))
	reg.Register(http.MethodDelete, "/repos/o/r/pulls/comments/42", githubtest.JSON(404, map[string]any{"message": "Not Found"}))
	reg.Register(http.MethodPut, reviewsPath+"/4", githubtest.Capture(t, &retired, githubtest.JSON(200, review(4, botLogin, "x", "CHANGES_REQUESTED"))))
	reg.Register(http.MethodPut, reviewsPath+"/4/dismissals", githubtest.Capture(t, &dismissed, githubtest.JSON(200, review(4, botLogin, "x", "DISMISSED"))))
	p := reviewPlan(t, reviewOutput)
	out, err := newReviewer(reg).Post(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	newURL := "https://github.com/o/r/pull/5#pullrequestreview-8"
	if created["commit_id"] != headSHA || created["body"] != p.Body(ReviewRequestChanges, "") {
		t.Errorf("created %v", created)
	}
	if diff := cmp.Diff(map[string]any{"body": RetiredBody("review", oldSHA, newURL)}, retired); diff != "" {
		t.Errorf("retired body (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"message": "Superseded by a newer review of this task: " + newURL}, dismissed); diff != "" {
		t.Errorf("dismissal (-want +got):\n%s", diff)
	}
	wantOrder := []string{"GET " + reviewsPath, "POST " + reviewsPath, "GET " + reviewsPath + "/4/comments",
		"DELETE /repos/o/r/pulls/comments/41", "DELETE /repos/o/r/pulls/comments/42", "PUT " + reviewsPath + "/4",
		"PUT " + reviewsPath + "/4/dismissals"}
	if diff := cmp.Diff(wantOrder, reg.Served()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if out.URL != newURL || out.Retired != 1 || out.Updated {
		t.Errorf("outcome %+v", out)
	}
}

// TestReviewRerunSamePush: the same push reviewed again with the same
// findings (a re-run of the job): the live review is kept and only its
// body is updated; no review is posted, nothing deleted.
func TestReviewRerunSamePush(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	p := reviewPlan(t, `{"verdict":"comment","summary":"new summary","findings":[{"file":"main.go","line":11,"message":"nit"}]}`)
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{
		review(4, botLogin, ReviewMarker("review", headSHA, ReviewComment)+"\nold summary", "COMMENTED"),
	}, 1, 1))
	reg.Register(http.MethodGet, reviewsPath+"/4/comments", githubtest.Page([]any{
		map[string]any{"id": 41, "path": "main.go", "original_line": 11, "line": 11, "body": p.Comments[0].Body},
	}, 1, 1))
	var updated map[string]any
	reg.Register(http.MethodPut, reviewsPath+"/4", githubtest.Capture(t, &updated, githubtest.JSON(200, review(4, botLogin, "x", "COMMENTED"))))
	out, err := newReviewer(reg).Post(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if updated["body"] != p.Body(ReviewComment, "") {
		t.Errorf("updated %v", updated)
	}
	if !out.Updated || out.ID != 4 || out.Retired != 0 || out.Inline != 1 {
		t.Errorf("outcome %+v", out)
	}
}

// TestReviewRerunSamePushNewFindings: the same push, other findings: a
// new review (line comments cannot be added to a submitted one), the old
// one retired; a COMMENTED review is not dismissed (GitHub refuses).
func TestReviewRerunSamePushNewFindings(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{
		review(4, botLogin, ReviewMarker("review", headSHA, ReviewComment)+"\nold", "COMMENTED"),
	}, 1, 1))
	reg.Register(http.MethodGet, reviewsPath+"/4/comments", githubtest.Page([]any{
		map[string]any{"id": 41, "path": "main.go", "original_line": 12, "body": "other"},
	}, 1, 1)).Times(2)
	reg.Register(http.MethodPost, reviewsPath, githubtest.JSON(200, review(8, botLogin, "x", "COMMENTED")))
	reg.Register(http.MethodDelete, "/repos/o/r/pulls/comments/41", githubtest.JSON(204, nil))
	reg.Register(http.MethodPut, reviewsPath+"/4", githubtest.JSON(200, review(4, botLogin, "x", "COMMENTED")))
	p := reviewPlan(t, `{"verdict":"comment","findings":[{"file":"main.go","line":11,"message":"nit"}]}`)
	out, err := newReviewer(reg).Post(t.Context(), p)
	if err != nil || out.ID != 8 || out.Retired != 1 {
		t.Errorf("outcome %+v, %v", out, err)
	}
}

// TestReviewForbidden: a read-only token (a pull request from a fork):
// 403 on create is ErrReadOnly, tried once.
func TestReviewForbidden(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{}, 1, 1))
	reg.Register(http.MethodPost, reviewsPath, githubtest.Error(403, "Resource not accessible by integration"))
	_, err := newReviewer(reg).Post(t.Context(), reviewPlan(t, reviewOutput))
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "403 Resource not accessible by integration") {
		t.Errorf("err %v, want ErrReadOnly", err)
	}
}

// TestReviewServerError: a 500 is tried three times in all, each try
// looking for the review again, then ErrReview.
func TestReviewServerError(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{}, 1, 1)).Times(3)
	reg.Register(http.MethodPost, reviewsPath, githubtest.Error(500, "boom")).Times(3)
	_, err := newReviewer(reg).Post(t.Context(), reviewPlan(t, reviewOutput))
	if !errors.Is(err, ErrReview) || errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "500") {
		t.Errorf("err %v, want ErrReview", err)
	}
}

// TestReviewCreatedDespiteError: the create answered 502 but went
// through: the retry finds the review (same commit, verdict and
// comments) and does not post it twice.
func TestReviewCreatedDespiteError(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	p := reviewPlan(t, `{"verdict":"comment","findings":[{"file":"main.go","line":11,"message":"nit"}]}`)
	body := p.Body(ReviewComment, "")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{}, 1, 1))
	reg.Register(http.MethodPost, reviewsPath, githubtest.Error(502, "bad gateway"))
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{review(8, botLogin, body, "COMMENTED")}, 1, 1))
	reg.Register(http.MethodGet, reviewsPath+"/8/comments", githubtest.Page([]any{
		map[string]any{"id": 81, "path": "main.go", "original_line": 11, "body": p.Comments[0].Body}}, 1, 1))
	out, err := newReviewer(reg).Post(t.Context(), p)
	if err != nil || out.ID != 8 || !out.Updated {
		t.Errorf("outcome %+v, %v", out, err)
	}
}

// TestReviewRetireFails: the new review is posted but the old one cannot
// be retired: ErrReviewRetire with the new review's URL, not retried.
func TestReviewRetireFails(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{
		review(4, botLogin, ReviewMarker("review", oldSHA, ReviewComment), "COMMENTED")}, 1, 1))
	reg.Register(http.MethodPost, reviewsPath, githubtest.JSON(200, review(8, botLogin, "x", "COMMENTED")))
	reg.Register(http.MethodGet, reviewsPath+"/4/comments", githubtest.Error(500, "boom"))
	out, err := newReviewer(reg).Post(t.Context(), reviewPlan(t, reviewOutput))
	if !errors.Is(err, ErrReviewRetire) || out.URL != "https://github.com/o/r/pull/5#pullrequestreview-8" {
		t.Errorf("outcome %+v, err %v", out, err)
	}
}

// TestReviewRerunNeutralizedIsUnchanged: a review whose summary and line
// comment named another host was posted neutralized (NeutralizeMarkdown),
// so GitHub holds other text than the plan's. A rerun on the same push
// must see it as the same review: no update and no second review with
// the same line comments.
func TestReviewRerunNeutralizedIsUnchanged(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	client, _, err := newClient(&Env{APIURL: reg.Server.URL + "/api/v3", ServerURL: reg.Server.URL, Token: "ghs_test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := reviewPlan(t, `{"verdict":"comment","summary":"see https://pkg.example/doc","findings":[{"file":"main.go","line":11,"message":"read https://pkg.example/x first"}]}`)
	body, line := postedForm(client, p.Body(ReviewComment, "")), postedForm(client, p.Comments[0].Body)
	if body == p.Body(ReviewComment, "") || line == p.Comments[0].Body {
		t.Fatalf("nothing was neutralized: %q", body)
	}
	reg.Register(http.MethodGet, reviewsPath, githubtest.Page([]any{review(4, botLogin, body, "COMMENTED")}, 1, 1))
	reg.Register(http.MethodGet, reviewsPath+"/4/comments", githubtest.Page([]any{
		map[string]any{"id": 41, "path": "main.go", "original_line": 11, "line": 11, "body": line},
	}, 1, 1))
	rv := newReviewer(reg) // no PUT or POST is registered: the registry fails the test on one
	rv.Client = client
	out, err := rv.Post(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != 4 {
		t.Errorf("outcome %+v, want review 4 kept", out)
	}
}
