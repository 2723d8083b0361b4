package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/report"
)

// conversationMarkdown is the head of the sticky comment of a
// conversation on a pull request: how this run started (continued or
// fresh, and why), then the chain of runs, earliest first, each with its
// prompt, status and the size of its own change, this run last.
func (r *execRun) conversationMarkdown(st *runStatus) string {
	var b strings.Builder
	if s := r.pr; s != nil && s.fresh != "" {
		fmt.Fprintf(&b, "> [!NOTE]\n> Started fresh from the pull request's head: %s.\n\n", r.redactor.Redact(s.fresh))
	}
	if c := r.continued; c != nil && len(c.why) > 0 {
		fmt.Fprintf(&b, "> [!NOTE]\n> Continued run %s although %s.\n\n", c.history.Header.RunID, strings.Join(c.why, " and "))
	}
	chain := r.chain()
	fmt.Fprintf(&b, "**Conversation** (%d run%s)\n\n| run | prompt | status | change |\n|---|---|---|---|\n", len(chain)+1, plural(len(chain)+1))
	for i, c := range chain {
		b.WriteString(chainRow(fmt.Sprint(i+1), c))
	}
	this := historyfile.ChainRun{RunID: r.runID, Prompt: cutPrompt(r.redactor.Redact(r.userMessage())), Status: st.Status}
	if r.gh != nil {
		this.URL = r.gh.Env.RunURL()
	}
	for _, f := range r.ownFiles() {
		this.Files, this.Additions, this.Deletions = this.Files+1, this.Additions+f.Additions, this.Deletions+f.Deletions
	}
	b.WriteString(chainRow(fmt.Sprintf("%d (this run)", len(chain)+1), this))
	if trigger := r.getenv("RUNNER_TRIGGER"); trigger != "" {
		fmt.Fprintf(&b, "\nComment `%s …` on this pull request to go on with this conversation.\n", strings.ReplaceAll(trigger, "`", "'"))
	}
	b.WriteString("\n")
	return b.String()
}

// chainRow is one row of the chain table.
func chainRow(n string, c historyfile.ChainRun) string {
	run := n
	if c.URL != "" {
		run = fmt.Sprintf("[%s](%s)", n, c.URL)
	}
	change := "no change"
	if c.Files > 0 {
		change = fmt.Sprintf("%d file%s, +%d −%d", c.Files, plural(c.Files), c.Additions, c.Deletions)
	}
	return fmt.Sprintf("| %s | %s | %s | %s |\n", run, tableCell(c.Prompt), strings.ReplaceAll(string(c.Status), "_", " "), change)
}

// tableCell makes text safe in a Markdown table cell: one line, pipes
// escaped, no HTML.
func tableCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// conversationComment is the body of the sticky comment on the pull
// request that keeps the conversation (the chain, then the report), and
// the history marker it carries; ok is false when the run keeps none.
func (r *execRun) conversationComment(ctx context.Context, st *runStatus) (content, header string, err error) {
	md, err := r.renderReport(ctx, st, report.GitHubCommentMax)
	if err != nil {
		return "", "", err
	}
	if ref := r.historyRef(); ref != nil {
		header = ref.Marker()
	} else if r.pr != nil && r.pr.ref.Valid() {
		header = r.pr.ref.Marker() // no new history: the one continued stays the newest
	}
	return r.conversationMarkdown(st) + md, header, nil
}

// finishPRComment posts the conversation comment on the pull request a
// fresh run of a github.continue task opened (its comment was on the
// issue): the comment later runs on the pull request update.
func (r *execRun) finishPRComment(ctx context.Context, st *runStatus) {
	if r.pr != nil || !r.spec.GitHub.Continue || r.prNumber == 0 || r.prNumber == r.gh.Event.GitHub.Number || !r.commentWanted() {
		return
	}
	content, header, err := r.conversationComment(ctx, st)
	if err == nil {
		s := &github.Sticky{Client: r.gh.Client, Owner: r.gh.Env.Owner, Repo: r.gh.Env.Repo, Number: r.prNumber,
			Task: r.spec.Name, Self: r.sticky.Self, Header: header}
		var url string
		if url, err = s.Finish(ctx, content); err == nil {
			r.published(event.Publish{Target: event.PublishComment, OK: true, URL: url})
			return
		}
	}
	r.deliveryFailed(st, event.PublishComment, "the pull request's comment could not be posted", err, "")
}
