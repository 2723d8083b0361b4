package github

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

const commentsPath = "/repos/octo/hello/issues/5/comments"

func comment(id int64, login, body string) map[string]any {
	return map[string]any{"id": id, "body": body, "user": map[string]any{"login": login},
		"html_url": sprintf("https://github.com/octo/hello/issues/5#issuecomment-%d", id)}
}

func newSticky(reg *githubtest.Registry) *Sticky {
	return &Sticky{Client: reg.Client(), Owner: "octo", Repo: "hello", Number: 5, Task: "review", Self: ActionsBotLogin, PerPage: 2}
}

// registerPages serves three pages of comments. Pages 1 and 2 hold comments
// of other people carrying our marker (pasted, or a human quoting it) and
// our own comment of another task; page 3 holds ours.
func registerPages(reg *githubtest.Registry) {
	m := Marker("review")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{
		comment(1, "mallory", m+"\nfake"), comment(2, ActionsBotLogin, Marker("other")+"\nother task"),
	}, 1, 3)).WithQuery("per_page", "2")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{
		comment(3, "someone", "quoting "+m), comment(4, "mallory[bot]", m+"\nbot fake"),
	}, 2, 3)).WithQuery("page", "2")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{
		comment(5, "alice", "thanks"), comment(6, ActionsBotLogin, m+"\n⏳ running"),
	}, 3, 3)).WithQuery("page", "3")
}

func TestStickyFindsOwnCommentOnPage3(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	registerPages(reg)
	c, err := newSticky(reg).Find(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.GetID() != 6 {
		t.Errorf("found comment %d, want 6", c.GetID())
	}
}

func TestStickyFinishEditsFoundComment(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	registerPages(reg)
	var sent struct{ Body string }
	reg.Register(http.MethodPatch, "/repos/octo/hello/issues/comments/6",
		githubtest.Capture(t, &sent, githubtest.JSON(200, comment(6, ActionsBotLogin, "x"))))
	report := "## ✅ success\n\nDone.\n\n<details><summary>Patch</summary>\n\n```diff\n" + strings.Repeat("+ line\n", 20000) + "```\n</details>\n"
	url, err := newSticky(reg).Finish(t.Context(), report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(url, "#issuecomment-6") {
		t.Errorf("url = %q", url)
	}
	if !strings.HasPrefix(sent.Body, Marker("review")+"\n## ✅ success\n\nDone.\n") || utf8.RuneCountInString(sent.Body) > CommentLimit {
		t.Errorf("body: %d runes, starts %q", utf8.RuneCountInString(sent.Body), sent.Body[:60])
	}
}

func TestStickyStartCreatesWhenNoneIsOurs(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, "/user", githubtest.Error(403, "Resource not accessible by integration"))
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{
		comment(1, "mallory", Marker("review")+"\nfake"),
	}, 1, 1))
	var sent struct{ Body string }
	reg.Register(http.MethodPost, commentsPath, githubtest.Capture(t, &sent, githubtest.JSON(201, comment(9, ActionsBotLogin, "x"))))
	s := newSticky(reg)
	s.Self = "" // resolved through GET /user (403: the Actions token)
	url, err := s.Start(t.Context(), "https://github.com/octo/hello/actions/runs/1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(url, "#issuecomment-9") || s.Self != ActionsBotLogin {
		t.Errorf("url=%q self=%q", url, s.Self)
	}
	want := Marker("review") + "\n⏳ **runner** is working on task `review`… [View the run](https://github.com/octo/hello/actions/runs/1)."
	if sent.Body != want {
		t.Errorf("body = %q\nwant   %q", sent.Body, want)
	}
}

func TestStickyRecreatesDeletedComment(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{comment(6, ActionsBotLogin, Marker("review")+"\nold")}, 1, 1))
	reg.Register(http.MethodPatch, "/repos/octo/hello/issues/comments/6", githubtest.Error(404, "Not Found"))
	reg.Register(http.MethodPost, commentsPath, githubtest.JSON(201, comment(7, ActionsBotLogin, "x")))
	url, err := newSticky(reg).Finish(t.Context(), "report")
	if err != nil || !strings.HasSuffix(url, "-7") {
		t.Errorf("url=%q err=%v", url, err)
	}
}

func TestStickyUnchangedBodyMakesNoEdit(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	s := newSticky(reg)
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{comment(6, ActionsBotLogin, s.Body("report"))}, 1, 1))
	url, err := s.Finish(t.Context(), "report")
	if err != nil || !strings.HasSuffix(url, "-6") {
		t.Errorf("url=%q err=%v", url, err)
	}
}

// TestStickyNeutralizedBodyMakesNoEdit: a report naming another host
// was posted neutralized, so GitHub holds other text than the report;
// finishing it again makes no edit (no PATCH is registered).
func TestStickyNeutralizedBodyMakesNoEdit(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	client, _, err := newClient(&Env{APIURL: reg.Server.URL + "/api/v3", ServerURL: reg.Server.URL, Token: "ghs_test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newSticky(reg)
	s.Client = client
	const report = "see ![x](https://evil.example/p?d=1)"
	held := postedForm(client, s.Body(report))
	if held == s.Body(report) {
		t.Fatalf("nothing was neutralized: %q", held)
	}
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{comment(6, ActionsBotLogin, held)}, 1, 1))
	url, err := s.Finish(t.Context(), report)
	if err != nil || !strings.HasSuffix(url, "-6") {
		t.Errorf("url=%q err=%v", url, err)
	}
}

func TestNewStickyNeedsNumber(t *testing.T) {
	ev, err := LoadEvent("schedule", readEvent(t, "schedule.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSticky(nil, ev, "t", ""); err == nil {
		t.Error("schedule event has no number")
	}
}

// TestStickyUpdateKeepsHistoryMarker: the report of a cancelled run
// (Update, from runner github finalize) keeps the history marker the
// comment had, right after the task's marker, so the next comment still
// finds the conversation.
func TestStickyUpdateKeepsHistoryMarker(t *testing.T) {
	reg := githubtest.New(t, "")
	c := reg.Comments("octo", "hello", ActionsBotLogin)
	ref := HistoryRef{WorkflowRun: 8, Artifact: "runner-history-8-1", RunID: "r2"}
	own := c.Add(5, ActionsBotLogin, Marker("review")+"\n"+ref.Marker()+"\n⏳ working")
	s := &Sticky{Client: reg.Client(), Owner: "octo", Repo: "hello", Number: 5, Task: "review", Self: ActionsBotLogin}
	if _, found, err := s.Update(t.Context(), "🛑 cancelled"); err != nil || !found {
		t.Fatalf("Update: %v found %v", err, found)
	}
	got := c.On(5)[0]
	if got.ID != own.ID || got.Body != Marker("review")+"\n"+ref.Marker()+"\n🛑 cancelled" {
		t.Errorf("comment %d body %q", got.ID, got.Body)
	}
}
