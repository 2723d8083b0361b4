package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// reviewCommentPayload is the pull_request_review_comment case file as a
// comment on line 1 of fix.txt of pull request 6, which the runner (prSelf)
// opened from head with body.
func reviewCommentPayload(t *testing.T, head, body, comment, author string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "cases", "github-events", "pull_request_review_comment.created.json"))
	if err != nil {
		data, err = os.ReadFile("/work/shared/cases/github-events/pull_request_review_comment.created.json")
	}
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	pr := p["pull_request"].(map[string]any)
	pr["number"], pr["body"], pr["user"].(map[string]any)["login"] = 6, body, prSelf
	pr["html_url"] = "https://github.com/" + prOwner + "/" + prRepo + "/pull/6"
	h := pr["head"].(map[string]any)
	h["ref"], h["sha"], h["repo"].(map[string]any)["full_name"] = prBranch, head, prOwner+"/"+prRepo
	pr["base"].(map[string]any)["ref"] = "main"
	cm := p["comment"].(map[string]any)
	cm["body"], cm["user"].(map[string]any)["login"], cm["path"], cm["line"], cm["start_line"] = comment, author, "fix.txt", 1, nil
	p["sender"].(map[string]any)["login"] = author
	out, _ := json.Marshal(p)
	return string(out)
}

// TestPRReviewCommentContinues: a comment on a line of the diff of a pull
// request the runner opened (pull_request_review_comment, the case
// payload's shape) continues the conversation as an issue_comment does:
// the history comes from the first workflow run's artifact, the comment
// (with its file and line) is the next message, the commit goes on the
// pull request's branch and the same sticky comment shows the chain. The
// payload carries the pull request, so it is not fetched.
func TestPRReviewCommentContinues(t *testing.T) {
	f := newPRFlow(t)
	out1, head1, srv1 := f.firstRun()
	first := f.prComment()
	f.allow("sample-commenter", "write")
	f.artifact(out1, 7, "runner-history-7", false)
	repo := f.checkout(prBranch)
	out2 := filepath.Join(t.TempDir(), "run2")
	srv2 := newModel(t, writeFileTurn("fix.txt", "fixed better\n"), llmtest.Turn{Text: "Reworded it."}.Reply())
	ask := "@runner say it better here"
	env := f.env("pull_request_review_comment", reviewCommentPayload(t, head1, f.prBody, ask, "sample-commenter"), "8")
	res, stderr, err := f.exec(repo, out2, env, srv2)
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("run 2: %v %+v\n%s", err, res, stderr)
	}
	last1 := rawMessages(t, srv1.Requests()[len(srv1.Requests())-1])
	first2 := rawMessages(t, srv2.Requests()[0])
	if len(first2) != len(last1)+2 {
		t.Fatalf("run 2's first request has %d messages, want run 1's %d and the comment", len(first2)-1, len(last1)-1)
	}
	for i := range len(last1) - 1 {
		if first2[i] != last1[i] {
			t.Fatalf("run 2 message %d differs from run 1's", i)
		}
	}
	if msg := first2[len(first2)-2]; !strings.Contains(msg, "Review comment on fix.txt:1") || !strings.Contains(msg, ask) {
		t.Errorf("the new message %s, want the comment with its file and line", msg)
	}
	rs := startedOf(t, out2)
	if rs.PullRequest == nil || !rs.PullRequest.Continued || rs.PullRequest.Number != 6 || rs.PullRequest.Branch != prBranch ||
		rs.PullRequest.History != "runner-history-7" || rs.PullRequest.Fresh != "" {
		t.Errorf("run.started pull_request %+v, want a continued conversation on #6", rs.PullRequest)
	}
	if parent := gittest.Run(t, f.remote, "rev-parse", prBranch+"^"); parent != head1 {
		t.Errorf("branch parent %s, want run 1's commit %s", parent, head1)
	}
	if got := gittest.Run(t, f.remote, "show", prBranch+":fix.txt"); got != "fixed better" {
		t.Errorf("fix.txt on the branch = %q", got)
	}
	c := f.prComment()
	if c.ID != first.ID || !strings.Contains(c.Body, "**Conversation** (2 runs)") || !strings.Contains(c.Body, "| Review comment on fix.txt:1: @runner say it better here | success |") {
		t.Errorf("comment %d (want %d), body:\n%s", c.ID, first.ID, c.Body)
	}
}
