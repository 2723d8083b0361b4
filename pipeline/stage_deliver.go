package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/report"
)

// Delivery is part of a run's outcome: the final stages push the branch,
// open the pull request and post the comment before run.finished, each
// call recorded as a publish event; a run whose work succeeded but whose
// delivery failed ends delivery_failed (exit 3) with what failed in its
// error, and the step outputs, written last, say so with the URL of
// whatever was made.

// deliveryFailure is one delivery call that failed.
type deliveryFailure struct {
	target event.PublishTarget
	text   string // "changes ready, pull request could not be opened: …"
}

// deliver, under GitHub Actions, pushes the run's changes and opens or
// updates the pull request when asked, recording each call as a publish
// event. A failure is part of the status, not a stage error.
func (r *execRun) deliver(ctx context.Context, st *runStatus) error {
	switch {
	case r.gh == nil:
		return skip("not running in GitHub Actions")
	case !r.gh.HasToken():
		return skip("no token") // said once, at the start
	}
	if r.pr != nil {
		return r.deliverToPR(ctx, st)
	}
	url, err := r.openPullRequest(ctx, st)
	if url != "" {
		r.prURL = url
	}
	switch target := failedTarget(err); {
	case err == nil && url == "":
		return nil // nothing to publish
	case err == nil:
		r.published(event.Publish{Target: event.PublishPush, OK: true, Branch: r.pushedBranch, Commit: r.pushedCommit})
		r.published(event.Publish{Target: event.PublishPullRequest, OK: true, URL: url})
	case target == event.PublishPush:
		r.deliveryFailed(st, target, "changes ready, the branch could not be pushed", err, "")
	case target == event.PublishLabels:
		r.published(event.Publish{Target: event.PublishPush, OK: true, Branch: r.pushedBranch, Commit: r.pushedCommit})
		r.published(event.Publish{Target: event.PublishPullRequest, OK: true, URL: url})
		r.deliveryFailed(st, target, "pull request "+url+" opened, its labels could not be added", err, url)
	default:
		if errors.Is(err, github.ErrPullRequest) { // the branch is there
			r.published(event.Publish{Target: event.PublishPush, OK: true, Branch: r.pushedBranch, Commit: r.pushedCommit})
		}
		r.deliveryFailed(st, target, "changes ready, pull request could not be opened", err, "")
	}
	return nil
}

// failedTarget is the call err comes from: the push (github.ErrPush,
// ErrLease), the labels (github.ErrLabels: the pull request exists), else
// the pull request (its calls, or planning it).
func failedTarget(err error) event.PublishTarget {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, github.ErrPush), errors.Is(err, github.ErrLease):
		return event.PublishPush
	case errors.Is(err, github.ErrLabels):
		return event.PublishLabels
	}
	return event.PublishPullRequest
}

// published records a publish event; a log that cannot take it is reported
// and the run goes on (run.finished will fail the same way).
//
// It carries what the GitHub client neutralized in the text it posted
// since the last publish event (github.NeutralizeMarkdown).
func (r *execRun) published(p event.Publish) {
	for _, n := range r.gh.TakeNeutralized() {
		p.Neutralized = append(p.Neutralized, event.NeutralizedURL{Kind: n.Kind, Host: n.Host})
	}
	if err := r.emit(p); err != nil {
		fmt.Fprintf(r.opts.Stderr, "runner: %v\n", err)
	}
}

// deliveryFailed records a failed delivery call (a publish event, shown as
// a ::warning) and, when the run had succeeded so far, makes the run's
// status delivery_failed with text as its message.
func (r *execRun) deliveryFailed(st *runStatus, target event.PublishTarget, what string, err error, url string) {
	msg := strings.TrimPrefix(r.redactor.Redact(err.Error()), "pull request: ")
	r.published(event.Publish{Target: target, URL: url, Error: msg})
	r.failures = append(r.failures, deliveryFailure{target: target, text: what + ": " + msg})
	if st.Status == event.StatusSuccess || st.Status == event.StatusDeliveryFailed {
		texts := make([]string, len(r.failures))
		for i, f := range r.failures {
			texts[i] = f.text
		}
		*st = runStatus{Status: event.StatusDeliveryFailed, Code: ExitInfra, Class: event.ClassDelivery,
			Message: strings.Join(texts, "; ")}
	}
}

// deliveryProblem reports a delivery call that failed before the final
// stages (the sticky comment's start), as a ::warning under Actions; the
// final stages try again and record the outcome.
func (r *execRun) deliveryProblem(what string, err error) {
	msg := what + ": " + err.Error()
	if r.redactor != nil {
		msg = r.redactor.Redact(msg)
	}
	r.annotate(workflowcmd.Annotation{Level: workflowcmd.Warning, Title: "runner: delivery", Message: msg})
}

// annotate writes a workflow command annotation under GitHub Actions
// (nothing elsewhere): through the console, which knows when its
// ::stop-commands:: block is open, or straight to stderr when there is
// none (before the out dir, or with --quiet).
func (r *execRun) annotate(a workflowcmd.Annotation) {
	if !r.inActions() {
		return
	}
	if r.console != nil {
		_ = r.console.Annotate(a)
		return
	}
	_ = (&workflowcmd.Writer{W: r.opts.Stderr}).Annotate(a)
}

// renderReport is the run's report in Markdown (at most maxLen bytes) from
// the log as written so far; with st, the run.finished line st will give
// is added first, so the report is the one the finished log will show.
func (r *execRun) renderReport(ctx context.Context, st *runStatus, maxLen int) (string, error) {
	recs, err := r.logRecords()
	if err != nil {
		return "", err
	}
	if st != nil {
		raw, err := json.Marshal(r.runFinished(st))
		if err != nil {
			return "", err
		}
		recs = append(recs, event.Record{Envelope: event.Envelope{V: 1, Seq: int64(len(recs) + 1), Time: time.Now().UTC(),
			RunID: r.runID, Type: event.RunFinished{}.EventType()}, Line: len(recs) + 1, Raw: raw})
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	rep, err := report.Build(recs)
	if err != nil {
		return "", err
	}
	opts := report.MarkdownOptions{MaxLen: maxLen, Redactor: r.redactor}
	if patch, size, err := report.ReadPatchExcerpt(r.patchPath); err == nil {
		opts.Patch, opts.PatchSize = patch, size
	}
	return rep.Markdown(opts), nil
}

// logRecords reads the event log back: the file, or the copy kept when
// the log goes to stdout.
func (r *execRun) logRecords() ([]event.Record, error) {
	var log io.Reader
	switch {
	case r.eventsPath != "":
		f, err := os.Open(r.eventsPath)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		log = f
	case r.eventsCopy != nil:
		log = strings.NewReader(r.eventsCopy.String())
	default:
		return nil, report.ErrNoEvents
	}
	return event.ReadLog(log)
}
