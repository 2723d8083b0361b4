package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// The GitHub continue flow (github.continue). A run that opens a pull
// request records in it (its body and a sticky comment on it) where its
// history is kept: the Actions artifact named by RUNNER_HISTORY_ARTIFACT,
// which the workflow uploads from the out dir after the run. A
// triggering comment on that pull request (the trigger gate applies as
// for any comment) fetches the artifact of the newest run through the
// Actions API and continues that conversation with the comment as the
// next message, against the pull request's head as checked out; the new
// commits go on the pull request's branch and the sticky comment (the
// same one) shows the chain of runs. When the history cannot be had (the
// artifact expired, a fork, a pull request the runner did not open, none
// recorded), the run starts fresh from the head with the comment as its
// prompt, and says so in run.started, a ::notice and the comment.

// historyArtifactEnv names the artifact the workflow uploads the out dir
// as; without it a run records no history reference.
const historyArtifactEnv = "RUNNER_HISTORY_ARTIFACT"

// prSession is a run on a comment on a pull request of a task with
// github.continue.
type prSession struct {
	number int
	branch string // the head branch: where the commits go
	fork   string // the head's repository when it is a fork: nothing is pushed
	url    string // the pull request's web URL
	ref    github.HistoryRef
	fresh  string // why the run starts fresh ("" when it continues)
	dir    string // the fetched history, removed at the end
}

// historyFiles are the out dir's files a history artifact must carry.
func historyFiles() []string {
	return []string{outdir.HistoryFile, outdir.EventsFile, outdir.ResultFile, outdir.PatchFile, outdir.RunPatch}
}

// setupPRSession, for a comment on a pull request of a task with
// github.continue, fetches the history the runner left on it and makes
// this run continue it (--continue with --force: the checkout is the
// pull request's head, whatever moved), or starts fresh and says why.
func (r *execRun) setupPRSession(ctx context.Context) error {
	switch {
	case r.gh == nil:
		return skip("not running in GitHub Actions")
	case !r.spec.GitHub.Continue:
		return skip("github.continue is off")
	case !continuesOn(r.gh.Event.GitHub):
		return skip("not a comment on a pull request")
	case !r.gh.HasToken():
		return skip("no token")
	}
	c := r.gh.Event.GitHub
	s := &prSession{number: c.Number, branch: c.HeadRef}
	if c.HeadRepo != "" && !strings.EqualFold(c.HeadRepo, c.Repository) {
		s.fork = c.HeadRepo
	}
	if pr := r.gh.Event.PullRequest; pr != nil {
		s.url = pr.HTMLURL
	}
	r.pr = s
	if r.opts.Continue != "" {
		return skip("--continue given")
	}
	if why := r.fetchPRHistory(ctx, s); why != "" {
		s.fresh = why
		r.opts.Prompt = cmp.Or(r.opts.Prompt, freshPrompt(s, r.gh.Event.CommentPrompt()))
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Notice, Title: "runner: starting fresh",
			Message: fmt.Sprintf("pull request #%d: %s; the run starts from its head with the comment as the prompt", s.number, why)})
		return nil
	}
	r.opts.Continue, r.opts.Force = s.dir, true
	r.opts.Prompt = cmp.Or(r.opts.Prompt, r.gh.Event.CommentPrompt())
	return nil
}

// continuesOn reports whether the event is a comment that can continue a
// pull request's conversation: an issue_comment on a pull request (the
// conversation tab) or a pull_request_review_comment (a comment on a line
// of its diff, whose file and line go into the prompt).
func continuesOn(c github.Context) bool {
	switch c.EventName {
	case github.EventIssueComment:
		return c.IsPR
	case github.EventReviewComment:
		return true
	}
	return false
}

// fetchPRHistory fetches the newest history of the pull request into a
// temporary directory (s.dir, s.ref); it returns why it cannot ("" when
// it did).
func (r *execRun) fetchPRHistory(ctx context.Context, s *prSession) string {
	c, pr := r.gh.Event.GitHub, r.gh.Event.PullRequest
	if s.fork != "" {
		return fmt.Sprintf("its head is in a fork (%s), so the runner did not open it and cannot push to it", s.fork)
	}
	self, err := r.gh.SelfLogin(ctx)
	switch {
	case err != nil:
		return "the token's login could not be read: " + err.Error()
	case pr == nil:
		return "the pull request could not be read"
	case !strings.EqualFold(pr.Author, self) || !github.OpenedFor(pr.Body, r.spec.Name):
		return fmt.Sprintf("it was not opened by the runner (%s) for task %s", self, r.spec.Name)
	}
	ref, ok := r.stickyHistoryRef(ctx)
	if !ok {
		ref, ok = github.FindHistoryRef(pr.Body)
	}
	if !ok {
		return "no run on it recorded a history (its workflow must set " + historyArtifactEnv + " and upload the out dir)"
	}
	dir, err := os.MkdirTemp(cmp.Or(r.getenv("RUNNER_TEMP"), os.TempDir()), "runner-history-")
	if err != nil {
		return "no directory for the history: " + err.Error()
	}
	s.dir = dir
	if err := github.FetchHistory(ctx, r.gh.Client, nil, c.Owner, c.Repo, ref, dir, historyFiles(), 0); err != nil {
		return fmt.Sprintf("the history of run %s could not be fetched (%v)", ref.RunID, err)
	}
	h, err := historyfile.Read(filepath.Join(dir, outdir.HistoryFile))
	if err == nil {
		_, err = verifyHistory(dir, h) // a missing digest is lifted as --force lifts it (below)
	}
	if err != nil {
		return fmt.Sprintf("the history of run %s cannot be continued (%v)", ref.RunID, err)
	}
	s.ref = ref
	return ""
}

// stickyHistoryRef is the history reference of the task's sticky comment
// on the pull request (the newest run's), if it has one.
func (r *execRun) stickyHistoryRef(ctx context.Context) (github.HistoryRef, bool) {
	st, err := r.gh.Sticky(ctx, r.spec.Name)
	if err != nil {
		return github.HistoryRef{}, false
	}
	found, err := st.Find(ctx)
	if err != nil || found == nil {
		return github.HistoryRef{}, false
	}
	return github.FindHistoryRef(found.GetBody())
}

// freshPrompt is the user message of a run that starts fresh on a pull
// request: where it is, why the earlier conversation is missing, and the
// comment.
func freshPrompt(s *prSession, comment string) string {
	return fmt.Sprintf("You are working on pull request #%d (branch %s); its changes are checked out in the work tree. "+
		"The earlier conversation about it is not available (%s), so read the code before you change it.\n\n"+
		"The comment that asked for this:\n\n%s", s.number, cmp.Or(s.branch, "unknown"), s.fresh, comment)
}

// prSessionEvent is run.started's pull_request field.
func (r *execRun) prSessionEvent() *event.PRSession {
	s := r.pr
	if s == nil {
		return nil
	}
	e := &event.PRSession{Number: s.number, Branch: s.branch, Continued: r.continued != nil, Fresh: s.fresh}
	if s.ref.Valid() {
		e.History = s.ref.Artifact
	}
	return e
}

// historyRef is where this run's history will be: the artifact the
// workflow uploads (RUNNER_HISTORY_ARTIFACT) of this workflow run; nil
// when the task has no github.continue or the workflow names none.
func (r *execRun) historyRef() *github.HistoryRef {
	name := r.getenv(historyArtifactEnv)
	if r.gh == nil || !r.spec.GitHub.Continue || name == "" {
		return nil
	}
	id, err := strconv.ParseInt(r.gh.Env.RunID, 10, 64)
	ref := &github.HistoryRef{WorkflowRun: id, Artifact: name, RunID: r.runID}
	if err != nil || !ref.Valid() {
		return nil
	}
	return ref
}

// ownFiles are the files this run changed: run.patch's for a continued
// run, else the whole patch's.
func (r *execRun) ownFiles() []snapshot.FileChange {
	if c := r.continued; c != nil && c.runBase != "" {
		return r.runFiles
	}
	return r.files
}

// deliverToPR pushes this run's changes on the pull request's branch,
// on top of the head the workflow checked out (the push is refused when
// the branch moved meanwhile): no new pull request.
func (r *execRun) deliverToPR(ctx context.Context, st *runStatus) error {
	s, files := r.pr, r.ownFiles()
	switch {
	case st.Status != event.StatusSuccess:
		fmt.Fprintf(r.opts.Stderr, "runner: nothing pushed: the run ended with status %s\n", st.Status)
		return nil
	case len(files) == 0:
		fmt.Fprintln(r.opts.Stderr, "runner: nothing pushed: this run changed no files")
		return nil
	case s.fork != "":
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Notice, Title: "runner: not pushed",
			Message: fmt.Sprintf("pull request #%d comes from the fork %s, which this token cannot push to; the patch is in the run's out dir", s.number, s.fork)})
		return nil
	}
	head, err := github.HeadCommit(r.workTree)
	if err == nil {
		push := github.PushOptions{RepoDir: r.workTree, BaseCommit: head, WorkTree: r.workTree,
			Paths: github.ChangedPaths(eventFiles(files)), Branch: s.branch, Expect: head,
			AuthorName: github.ActionsAuthorName, AuthorEmail: github.ActionsAuthorEmail, Message: r.commitMessage()}
		_, err = r.gh.PushBranch(ctx, push)
	}
	if err != nil {
		what := "changes ready, the pull request's branch could not be pushed"
		if errors.Is(err, github.ErrLease) {
			what = "changes ready, but the pull request's branch moved since it was checked out"
		}
		r.deliveryFailed(st, event.PublishPush, what, err, "")
		return nil
	}
	r.prURL = s.url
	r.published(event.Publish{Target: event.PublishPush, OK: true, URL: s.url})
	return nil
}

// commitMessage is the commit of a run on a pull request: the task and
// the first line of its message.
func (r *execRun) commitMessage() string {
	line, _, _ := strings.Cut(strings.TrimSpace(r.redactor.Redact(r.userMessage())), "\n")
	if r.pr != nil && r.pr.fresh != "" {
		line = strings.TrimSpace(r.gh.Event.GitHub.CommentBody)
		line, _, _ = strings.Cut(r.redactor.Redact(line), "\n")
	}
	if rs := []rune(line); len(rs) > 72 {
		line = string(rs[:71]) + "…"
	}
	return "runner: " + r.spec.Name + ": " + line
}
