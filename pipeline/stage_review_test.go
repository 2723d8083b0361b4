package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// reviewSpec is a read-only review task in review mode.
const reviewSpec = `version: 1
name: review
model: gpt-4.1-mini
prompt: Review the change.
permissions:
  read: allow
limits:
  max_steps: 3
output:
  schema:
    type: object
    required: [verdict, findings]
    properties:
      verdict: {type: string, enum: [approve, comment, request_changes]}
      findings:
        type: array
        items:
          type: object
          required: [file, line, message]
          properties:
            file: {type: string}
            line: {type: integer}
            end_line: {type: integer}
            severity: {type: string}
            message: {type: string}
            suggestion: {type: string}
github:
  review: true
`

// reviewFindings has one finding inside the diff (with a suggestion), a
// range inside it, and one outside.
const reviewFindings = `{"verdict":"request_changes","findings":[` +
	`{"file":"main.go","line":2,"severity":"error","message":"err is ignored","suggestion":"\tcheck(err)"},` +
	`{"file":"main.go","line":3,"end_line":4,"severity":"warning","message":"dead code"},` +
	`{"file":"main.go","line":40,"severity":"info","message":"old code: rename x"}]}`

// mainPatch is the files API's patch of main.go: lines 1-5 of the head.
const mainPatch = "@@ -1,2 +1,5 @@\n package main\n+\tx, err := f()\n+\t_ = x\n+\t_ = err\n }"

// reviewRun is a review-mode run on pull request #5 of octo/hello in
// Actions, against a fake API.
type reviewRun struct {
	spec, repo, out, head string
	headRepo              string // "" for octo/hello
	api                   *githubtest.Registry
	env                   []string
	outputs, summary      string
	stderr, stdout        bytes.Buffer
}

func newReviewRun(t *testing.T) *reviewRun {
	t.Helper()
	d := &reviewRun{}
	d.spec, d.repo = execFixture(t)
	mustWrite(t, d.spec, reviewSpec)
	gittest.Run(t, d.repo, "init", "-q", "-b", "main")
	gittest.Run(t, d.repo, "add", "-A")
	gittest.Run(t, d.repo, "commit", "-q", "-m", "init")
	d.head = gittest.Run(t, d.repo, "rev-parse", "HEAD")
	d.api = githubtest.New(t, "/api/v3")
	allowAuthor(d.api)
	d.setEvent(t)
	return d
}

// setEvent points the run at a pull_request event whose head is the work
// tree's HEAD.
func (d *reviewRun) setEvent(t *testing.T) {
	t.Helper()
	headRepo := d.headRepo
	if headRepo == "" {
		headRepo = "octo/hello"
	}
	payload := fmt.Sprintf(`{"action":"synchronize","number":5,"pull_request":{"number":5,"user":{"login":"alice"},"title":"t","head":{"ref":"f","sha":%q,`+
		`"repo":{"full_name":%q}},"base":{"ref":"main"}},"sender":{"login":"alice","type":"User"}}`, d.head, headRepo)
	d.env, d.outputs, d.summary = actionsEnv(t, "pull_request", payload, "RUNNER_COMMENT=false")
	for i, kv := range d.env {
		if strings.HasPrefix(kv, "GITHUB_API_URL=") {
			d.env[i] = "GITHUB_API_URL=" + d.api.Server.URL + "/api/v3"
		}
	}
}

// exec runs the task; the model answers with output as its structured
// output.
func (d *reviewRun) exec(t *testing.T, output string) error {
	t.Helper()
	d.out = t.TempDir()
	d.stderr.Reset()
	d.stdout.Reset()
	return testRun{specFile: d.spec, repo: d.repo, out: d.out, noLog: true,
		replies: []llmtest.Reply{llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("StructuredOutput", output)}}.Reply()},
		opts:    func(o *ExecOptions) { o.Environ, o.Quiet, o.Stdout, o.Stderr = d.env, false, &d.stdout, &d.stderr }}.exec(t).err
}

func (d *reviewRun) stubFiles(times int) {
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/files", githubtest.Page([]any{
		map[string]any{"filename": "main.go", "status": "modified", "patch": mainPatch}}, 1, 1)).Times(times)
}

// result reads result.json.
func (d *reviewRun) result(t *testing.T) event.RunFinished {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fin event.RunFinished
	if err := json.Unmarshal(data, &fin); err != nil {
		t.Fatal(err)
	}
	return fin
}

// reviewPublish is the log's publish events of target review.
func (d *reviewRun) reviewPublish(t *testing.T, want event.Status) []event.Publish {
	t.Helper()
	var out []event.Publish
	for _, p := range publishEvents(t, &deliveryRun{out: d.out}, want) {
		if p.Target == event.PublishReview {
			out = append(out, p)
		}
	}
	return out
}

// TestExecReviewPosted: on a pull_request event the findings become one
// review: the request body is exactly the plan (line comments on side
// RIGHT, a range as start_line/line, the suggestion block; the finding
// outside the diff in the body), the event from the verdict; a publish
// event, result.json and the review-url output name it.
func TestExecReviewPosted(t *testing.T) {
	d := newReviewRun(t)
	d.stubFiles(1)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/reviews", githubtest.Page([]any{}, 1, 1))
	var got map[string]any
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Capture(t, &got, githubtest.JSON(200, map[string]any{
		"id": 70, "state": "CHANGES_REQUESTED", "html_url": "https://github.com/octo/hello/pull/5#pullrequestreview-70"})))
	if err := d.exec(t, reviewFindings); err != nil {
		t.Fatalf("%v\n%s", err, d.stderr.String())
	}
	body, _ := got["body"].(string)
	delete(got, "body")
	want := map[string]any{"commit_id": d.head, "event": "REQUEST_CHANGES", "comments": []any{
		map[string]any{"path": "main.go", "line": 2.0, "side": "RIGHT", "body": "🛑 **error**: err is ignored\n\n```suggestion\n\tcheck(err)\n```"},
		map[string]any{"path": "main.go", "start_line": 3.0, "start_side": "RIGHT", "line": 4.0, "side": "RIGHT", "body": "⚠️ **warning**: dead code"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("create review (-want +got):\n%s", diff)
	}
	for _, s := range []string{"<!-- runner:review task=review commit=" + d.head + " event=REQUEST_CHANGES -->\n### 🔴 runner review: changes requested",
		"3 findings: 2 on the changed lines (see the line comments), 1 outside the diff (below).",
		"- ℹ️ **info** `main.go:40` (not in the diff): old code: rename x", "task `review`", "[run](https://github.com/octo/hello/actions/runs/7)"} {
		if !strings.Contains(body, s) {
			t.Errorf("review body lacks %q:\n%s", s, body)
		}
	}
	url := "https://github.com/octo/hello/pull/5#pullrequestreview-70"
	wantReview := &event.PublishedReview{URL: url, Event: "REQUEST_CHANGES", Inline: 2, InBody: 1}
	pubs := d.reviewPublish(t, event.StatusSuccess)
	if len(pubs) != 1 || !pubs[0].OK || pubs[0].URL != url || !cmp.Equal(pubs[0].Review, wantReview) {
		t.Errorf("publish events %+v", pubs)
	}
	if fin := d.result(t); !cmp.Equal(fin.Review, wantReview) {
		t.Errorf("result.json review %+v", fin.Review)
	}
	if out := outputsMap(t, d.outputs); out["review-url"] != url || out["status"] != "success" {
		t.Errorf("outputs %v", out)
	}
	if strings.Contains(d.stderr.String(), "the work tree is at") {
		t.Errorf("checkout warning with the head checked out:\n%s", d.stderr.String())
	}
}

// fakeReviews is a stateful Reviews API for one pull request: what one
// run posts, the next run finds.
type fakeReviews struct {
	mu       sync.Mutex
	t        *testing.T
	reviews  []map[string]any
	comments map[int64][]map[string]any
	nextID   int64
	posted   []map[string]any // create requests
	deleted  []string
	edited   map[int64]string
	dismiss  []int64
}

func newFakeReviews(t *testing.T) *fakeReviews {
	t.Helper()
	return &fakeReviews{t: t, comments: map[int64][]map[string]any{}, nextID: 100, edited: map[int64]string{}}
}

func (f *fakeReviews) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	githubtest.Page(append([]map[string]any{}, f.reviews...), 1, 1)(w, r)
}

func (f *fakeReviews) create(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var req struct {
		CommitID string           `json:"commit_id"`
		Body     string           `json:"body"`
		Event    string           `json:"event"`
		Comments []map[string]any `json:"comments"`
	}
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &req); err != nil {
		f.t.Errorf("create review: %v", err)
	}
	var raw map[string]any
	_ = json.Unmarshal(data, &raw)
	f.posted = append(f.posted, raw)
	id := f.nextID
	f.nextID++
	state := map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}[req.Event]
	if state == "" {
		state = "COMMENTED"
	}
	rev := map[string]any{"id": id, "user": map[string]any{"login": "github-actions[bot]"}, "body": req.Body, "state": state,
		"commit_id": req.CommitID, "html_url": fmt.Sprintf("https://github.com/octo/hello/pull/5#pullrequestreview-%d", id)}
	f.reviews = append(f.reviews, rev)
	for i, c := range req.Comments {
		c["id"] = id*10 + int64(i)
		c["original_line"], c["original_start_line"] = c["line"], c["start_line"]
		f.comments[id] = append(f.comments[id], c)
	}
	githubtest.JSON(200, rev)(w, r)
}

// register stubs the calls of one run that posts a new review and
// retires retired (0: none); same is a run that keeps the live review.
func (f *fakeReviews) register(api *githubtest.Registry, base string, retired int64, same bool) {
	api.Register(http.MethodGet, base, f.list)
	if same {
		id := f.nextID - 1
		api.Register(http.MethodGet, fmt.Sprintf("%s/%d/comments", base, id), func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			defer f.mu.Unlock()
			githubtest.Page(f.comments[id], 1, 1)(w, r)
		})
		return
	}
	api.Register(http.MethodPost, base, f.create)
	if retired == 0 {
		return
	}
	api.Register(http.MethodGet, fmt.Sprintf("%s/%d/comments", base, retired), func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		githubtest.Page(f.comments[retired], 1, 1)(w, r)
	})
	for _, c := range f.comments[retired] {
		path := fmt.Sprintf("/repos/octo/hello/pulls/comments/%d", c["id"])
		api.Register(http.MethodDelete, path, func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			f.deleted = append(f.deleted, path)
			f.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		})
	}
	api.Register(http.MethodPut, fmt.Sprintf("%s/%d", base, retired), func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Body string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.edited[retired] = req.Body
		for _, rev := range f.reviews {
			if rev["id"] == retired {
				rev["body"] = req.Body
			}
		}
		githubtest.JSON(200, map[string]any{"id": retired})(w, r)
	})
	api.Register(http.MethodPut, fmt.Sprintf("%s/%d/dismissals", base, retired), func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.dismiss = append(f.dismiss, retired)
		githubtest.JSON(200, map[string]any{"id": retired, "state": "DISMISSED"})(w, r)
	})
}

// TestExecReviewRerun: the workflow runs again. On a new push with other
// findings the runner posts a new review and retires the first (its line
// comments deleted, body pointing at the new review, its request for
// changes dismissed): one live review, not two. A re-run of the same push
// with the same findings posts nothing and keeps the review.
func TestExecReviewRerun(t *testing.T) {
	d := newReviewRun(t)
	f := newFakeReviews(t)
	base := "/repos/octo/hello/pulls/5/reviews"
	d.stubFiles(3)

	f.register(d.api, base, 0, false)
	if err := d.exec(t, reviewFindings); err != nil {
		t.Fatalf("run 1: %v\n%s", err, d.stderr.String())
	}

	// A new push: the work tree and the event's head move on.
	mustWrite(t, filepath.Join(d.repo, "README"), "unit 2\n")
	gittest.Run(t, d.repo, "commit", "-q", "-am", "second")
	d.head = gittest.Run(t, d.repo, "rev-parse", "HEAD")
	d.setEvent(t)
	second := `{"verdict":"comment","findings":[{"file":"main.go","line":5,"severity":"info","message":"brace"}]}`
	f.register(d.api, base, 100, false)
	if err := d.exec(t, second); err != nil {
		t.Fatalf("run 2: %v\n%s", err, d.stderr.String())
	}
	if len(f.posted) != 2 || f.posted[1]["commit_id"] != d.head || f.posted[1]["event"] != "COMMENT" {
		t.Fatalf("posted %v", f.posted)
	}
	if diff := cmp.Diff([]string{"/repos/octo/hello/pulls/comments/1000", "/repos/octo/hello/pulls/comments/1001"}, f.deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(f.edited[100], "<!-- runner:review-retired task=review ") ||
		!strings.Contains(f.edited[100], "(https://github.com/octo/hello/pull/5#pullrequestreview-101)") || len(f.dismiss) != 1 {
		t.Errorf("retired body %q, dismissals %v", f.edited[100], f.dismiss)
	}
	want := &event.PublishedReview{URL: "https://github.com/octo/hello/pull/5#pullrequestreview-101", Event: "COMMENT", Inline: 1, Retired: 1}
	if fin := d.result(t); !cmp.Equal(fin.Review, want) {
		t.Errorf("run 2 review %+v, want %+v", fin.Review, want)
	}

	// The same push again (a re-run of the job): nothing new is posted.
	f.register(d.api, base, 0, true)
	if err := d.exec(t, second); err != nil {
		t.Fatalf("run 3: %v\n%s", err, d.stderr.String())
	}
	if len(f.posted) != 2 {
		t.Errorf("run 3 posted a review: %v", f.posted[2:])
	}
	want.Updated, want.Retired = true, 0
	if fin := d.result(t); !cmp.Equal(fin.Review, want) {
		t.Errorf("run 3 review %+v, want %+v", fin.Review, want)
	}
}

// TestExecReviewFork: a pull request from a fork gets a read-only token:
// the review is refused (403), the findings go to the step summary with
// a ::warning that says so, and the run ends as the delivery rules say
// (delivery_failed, exit 3, nothing posted).
func TestExecReviewFork(t *testing.T) {
	d := newReviewRun(t)
	d.headRepo = "mallory/hello"
	d.setEvent(t)
	d.stubFiles(1)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/reviews", githubtest.Page([]any{}, 1, 1))
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Error(403, "Resource not accessible by integration"))
	err := d.exec(t, reviewFindings)
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	summary, rerr := os.ReadFile(d.summary)
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, s := range []string{"## runner review (not posted)",
		"> The token may not write reviews (the pull request comes from the fork mallory/hello, and a pull_request run for a fork gets a read-only token): ",
		"**`main.go:2`**", "```suggestion\n\tcheck(err)\n```", "`main.go:40` (not in the diff): old code: rename x"} {
		if !strings.Contains(string(summary), s) {
			t.Errorf("step summary lacks %q:\n%s", s, summary)
		}
	}
	if !strings.Contains(d.stderr.String(), "::warning title=runner%3A delivery::review failed: the token may not write reviews (the pull request comes from the fork mallory/hello") {
		t.Errorf("no ::warning:\n%s", d.stderr.String())
	}
	pubs := d.reviewPublish(t, event.StatusDeliveryFailed)
	if len(pubs) != 1 || pubs[0].OK || !strings.Contains(pubs[0].Error, "403") {
		t.Errorf("publish events %+v", pubs)
	}
	if out := outputsMap(t, d.outputs); out["status"] != "delivery_failed" || out["exit-code"] != "3" || out["review-url"] != "" {
		t.Errorf("outputs %v", out)
	}
	if fin := d.result(t); fin.Review != nil || fin.Error == nil || !strings.Contains(fin.Error.Message, "the review could not be posted: ") {
		t.Errorf("result.json %+v", fin)
	}
}

// TestExecReviewServerError: the Reviews API answers 500 (after the
// retries): delivery_failed, exit 3, the findings in the step summary.
func TestExecReviewServerError(t *testing.T) {
	d := newReviewRun(t)
	d.stubFiles(1)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/reviews", githubtest.Page([]any{}, 1, 1)).Times(3)
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Error(500, "boom")).Times(3)
	err := d.exec(t, reviewFindings)
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	pubs := d.reviewPublish(t, event.StatusDeliveryFailed)
	if len(pubs) != 1 || pubs[0].OK || !strings.Contains(pubs[0].Error, "500") {
		t.Errorf("publish events %+v", pubs)
	}
	if summary, _ := os.ReadFile(d.summary); !strings.Contains(string(summary), "## runner review (not posted)") {
		t.Errorf("step summary:\n%s", summary)
	}
}

// TestExecReviewApproveOff: approve: false posts an approve verdict as a
// comment, and the body and result say so. The work tree is not at the
// pull request's head (as after actions/checkout's default merge
// commit): a ::warning says the lines may not match.
func TestExecReviewApproveOff(t *testing.T) {
	d := newReviewRun(t)
	d.head = strings.Repeat("e", 40)
	d.setEvent(t)
	mustWrite(t, d.spec, strings.Replace(reviewSpec, "review: true", "review: {approve: false}", 1))
	d.stubFiles(1)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/reviews", githubtest.Page([]any{}, 1, 1))
	var got map[string]any
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Capture(t, &got, githubtest.JSON(200, map[string]any{
		"id": 70, "state": "COMMENTED", "html_url": "https://github.com/octo/hello/pull/5#pullrequestreview-70"})))
	if err := d.exec(t, `{"verdict":"approve","findings":[]}`); err != nil {
		t.Fatal(err)
	}
	if body, _ := got["body"].(string); got["event"] != "COMMENT" || !strings.Contains(body, "github.review.approve: false") ||
		got["commit_id"] != d.head {
		t.Errorf("request %v", got)
	}
	if !strings.Contains(d.stderr.String(), "::warning title=runner%3A review::the work tree is at ") {
		t.Errorf("no checkout warning:\n%s", d.stderr.String())
	}
	if fin := d.result(t); fin.Review == nil || fin.Review.Requested != "APPROVE" || fin.Review.Event != "COMMENT" {
		t.Errorf("review %+v", fin.Review)
	}
}

// TestExecReviewNoPullRequest: a push event names no pull request: no
// review call, a ::warning that says why and how (--pr N), status success.
func TestExecReviewNoPullRequest(t *testing.T) {
	d := newReviewRun(t)
	d.env, d.outputs, d.summary = actionsEnv(t, "push", `{"ref":"refs/heads/main"}`)
	if err := d.exec(t, reviewFindings); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.stderr.String(), "::warning title=runner%3A review::no review: the push event names no pull request (give --pr N") {
		t.Errorf("stderr:\n%s", d.stderr.String())
	}
}

// TestExecReviewPR: --pr N on a workflow_dispatch event reviews that pull
// request, its head read from the Pulls API.
func TestExecReviewPR(t *testing.T) {
	d := newReviewRun(t)
	d.env, d.outputs, d.summary = actionsEnv(t, "workflow_dispatch", `{"ref":"refs/heads/main","inputs":{}}`)
	for i, kv := range d.env {
		if strings.HasPrefix(kv, "GITHUB_API_URL=") {
			d.env[i] = "GITHUB_API_URL=" + d.api.Server.URL + "/api/v3"
		}
	}
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5", githubtest.JSON(200, map[string]any{"number": 5, "title": "t",
		"head": map[string]any{"ref": "f", "sha": d.head, "repo": map[string]any{"full_name": "octo/hello"}}, "base": map[string]any{"ref": "main"}}))
	d.stubFiles(1)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/reviews", githubtest.Page([]any{}, 1, 1))
	var got map[string]any
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Capture(t, &got, githubtest.JSON(200, map[string]any{
		"id": 70, "state": "COMMENTED", "html_url": "https://github.com/octo/hello/pull/5#pullrequestreview-70"})))
	srv := newModel(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("StructuredOutput", `{"verdict":"comment","findings":[]}`)}}.Reply())
	_, err := Exec(t.Context(), ExecOptions{Task: d.spec, Repo: d.repo, Out: t.TempDir(), BaseURL: srv.URL(), PR: 5,
		APIKey: "sk-unit-0123456789abcdef", Environ: d.env, Stdout: &d.stdout, Stderr: &d.stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, d.stderr.String())
	}
	if got["commit_id"] != d.head || got["event"] != "COMMENT" {
		t.Errorf("request %v", got)
	}
}

// TestExecPROutsideActions: --pr outside Actions is a usage error.
func TestExecPROutsideActions(t *testing.T) {
	spec, repo := execFixture(t)
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), PR: 5, BaseURL: "http://127.0.0.1:1",
		APIKey: "sk-unit-0123456789abcdef"})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--pr 5: only under GitHub Actions") {
		t.Errorf("err %v (exit %d), want a usage error", err, ExitCode(err))
	}
}

// TestExecReviewFilesFail: the pull request's files cannot be read (404):
// no review is posted, the run ends delivery_failed and the findings are
// still in the step summary.
func TestExecReviewFilesFail(t *testing.T) {
	d := newReviewRun(t)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/files", githubtest.Error(404, "Not Found"))
	err := d.exec(t, reviewFindings)
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	summary, _ := os.ReadFile(d.summary)
	if !strings.Contains(string(summary), "> the pull request's diff could not be read: ") || !strings.Contains(string(summary), "err is ignored") {
		t.Errorf("step summary:\n%s", summary)
	}
	if pubs := d.reviewPublish(t, event.StatusDeliveryFailed); len(pubs) != 1 || pubs[0].OK || !strings.Contains(pubs[0].Error, "404") {
		t.Errorf("publish events %+v", pubs)
	}
}

// TestExecReviewApproveRefused: GitHub refuses the approval (422, Actions
// may not approve): the review is posted as a comment, a ::warning says
// so, and result.json records the event asked for.
func TestExecReviewApproveRefused(t *testing.T) {
	d := newReviewRun(t)
	d.stubFiles(1)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls/5/reviews", githubtest.Page([]any{}, 1, 1))
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.JSON(422, map[string]any{
		"message": "Unprocessable Entity", "errors": []any{"GitHub Actions is not permitted to approve pull requests."}}))
	var got map[string]any
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls/5/reviews", githubtest.Capture(t, &got, githubtest.JSON(200, map[string]any{
		"id": 70, "state": "COMMENTED", "html_url": "https://github.com/octo/hello/pull/5#pullrequestreview-70"})))
	if err := d.exec(t, `{"verdict":"approve","findings":[]}`); err != nil {
		t.Fatalf("%v\n%s", err, d.stderr.String())
	}
	note := "GitHub refused APPROVE (Unprocessable Entity: GitHub Actions is not permitted to approve pull requests.): the review is posted as a comment."
	if body, _ := got["body"].(string); got["event"] != "COMMENT" || !strings.Contains(body, "> "+note) {
		t.Errorf("request %v", got)
	}
	if !strings.Contains(d.stderr.String(), "::warning title=runner%3A review::GitHub refused APPROVE") {
		t.Errorf("no ::warning:\n%s", d.stderr.String())
	}
	want := &event.PublishedReview{URL: "https://github.com/octo/hello/pull/5#pullrequestreview-70", Event: "COMMENT", Requested: "APPROVE", Note: note}
	if fin := d.result(t); !cmp.Equal(fin.Review, want) || fin.Status != event.StatusSuccess {
		t.Errorf("result %+v review %+v, want %+v", fin.Status, fin.Review, want)
	}
}
