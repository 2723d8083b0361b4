package github

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/runner/event"
)

// RunOutputs are the step outputs of `runner exec` in Actions; action.yml
// maps each name (see List) to an output of the action.
type RunOutputs struct {
	Status     event.Status // run.finished status
	ExitCode   int
	PatchPath  string
	EventsPath string
	CommentURL string
	PRURL      string
	CostUSD    *float64 // nil: unknown, written as ""
	// StructuredOutput is the run's structured output as JSON ("" for
	// none).
	StructuredOutput string
	// Denials counts the calls the permissions refused; DeniedCalls are
	// they (run.finished's denied_calls), written as the denials-json
	// output: a JSON array of {step, call_id, tool, permission, pattern,
	// rule, reason}.
	Denials     int
	DeniedCalls []event.PermissionDenied
	// ReviewURL is the pull request review of review mode ("" for none).
	ReviewURL string
}

// OutputNames are the names RunOutputs writes, in order.
func OutputNames() []string {
	return []string{"status", "exit-code", "patch-path", "events-path", "comment-url", "pr-url", "cost-usd", "structured-output",
		"denials", "denials-json", "review-url"}
}

// List returns the outputs as pairs, every name present (empty when unknown).
func (r RunOutputs) List() []Output {
	cost := ""
	if r.CostUSD != nil {
		cost = strconv.FormatFloat(*r.CostUSD, 'f', -1, 64)
	}
	denied := r.DeniedCalls
	if denied == nil {
		denied = []event.PermissionDenied{}
	}
	deniedJSON, err := json.Marshal(denied)
	if err != nil { // plain strings and ints: cannot fail
		deniedJSON = []byte("[]")
	}
	values := []string{string(r.Status), strconv.Itoa(r.ExitCode), r.PatchPath, r.EventsPath, r.CommentURL, r.PRURL, cost,
		r.StructuredOutput, strconv.Itoa(r.Denials), string(deniedJSON), r.ReviewURL}
	out := make([]Output, len(values))
	for i, name := range OutputNames() {
		out[i] = Output{Name: name, Value: values[i]}
	}
	return out
}

// Outcome is what an events file says about a run.
type Outcome struct {
	RunID    string
	Task     string
	Model    string
	Finished bool // the log has its run.finished line
	Result   event.RunFinished
	// Delivery are the publish events, in order.
	Delivery []event.Publish
	// Denied are the permission.denied events (the first
	// event.MaxDeniedCalls) and Denials their count, for a log without
	// run.finished; a finished log's Result carries the same.
	Denied  []event.PermissionDenied
	Denials int
}

// URL is the URL the last successful publish event of target gave ("" for
// none): the pull request or the comment a run made.
func (o Outcome) URL(target event.PublishTarget) string {
	url := ""
	for _, d := range o.Delivery {
		if d.Target == target && d.URL != "" {
			url = d.URL
		}
	}
	return url
}

// ReadOutcome reads a JSONL events file for its run.started and
// run.finished lines. A log without run.finished (the run was killed) gives
// status "cancelled"; a torn last line is ignored.
func ReadOutcome(r io.Reader) (Outcome, error) {
	var o Outcome
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		var env event.Envelope
		line := sc.Bytes()
		if json.Unmarshal(line, &env) != nil {
			continue // a line cut by a kill
		}
		if o.RunID == "" {
			o.RunID = env.RunID
		}
		switch env.Type {
		case "run.started":
			var s event.RunStarted
			if json.Unmarshal(line, &s) == nil {
				o.Task, o.Model = s.Task, s.Model
			}
		case "permission.denied":
			var d event.PermissionDenied
			if json.Unmarshal(line, &d) == nil {
				o.Denials++
				if len(o.Denied) < event.MaxDeniedCalls {
					o.Denied = append(o.Denied, d)
				}
			}
		case "publish":
			var p event.Publish
			if json.Unmarshal(line, &p) == nil {
				o.Delivery = append(o.Delivery, p)
			}
		case "run.finished":
			if err := json.Unmarshal(line, &o.Result); err != nil {
				return o, fmt.Errorf("github: run.finished line: %w", err)
			}
			o.Finished = true
		}
	}
	if err := sc.Err(); err != nil {
		return o, fmt.Errorf("github: read events: %w", err)
	}
	if o.Finished && o.Result.Denials == 0 && o.Denials > 0 { // a log from before run.finished had denials
		o.Result.Denials, o.Result.DeniedCalls = o.Denials, o.Denied
	}
	if !o.Finished {
		o.Result = event.RunFinished{Status: event.StatusCancelled, ExitCode: 130,
			FinalMessage: "The run ended without its final event: it was cancelled or killed.",
			Denials:      o.Denials, DeniedCalls: o.Denied}
	}
	return o, nil
}

// Markdown is a minimal report of the outcome, used when no renderer is
// given or the renderer fails.
func (o Outcome) Markdown() string {
	icon := map[event.Status]string{event.StatusSuccess: "✅", event.StatusCancelled: "🛑"}[o.Result.Status]
	var b strings.Builder
	fmt.Fprintf(&b, "## %s runner: %s\n\n", cmp.Or(icon, "❌"), o.Result.Status)
	var facts []string
	if o.Task != "" {
		facts = append(facts, fmt.Sprintf("task `%s`", o.Task))
	}
	if o.Model != "" {
		facts = append(facts, fmt.Sprintf("model `%s`", o.Model))
	}
	if c := o.Result.CostUSD; c != nil {
		facts = append(facts, "cost "+event.FormatCost(*c))
	}
	if o.Result.FilesChanged > 0 {
		facts = append(facts, fmt.Sprintf("%d files changed", o.Result.FilesChanged))
	}
	if len(facts) > 0 {
		b.WriteString(strings.Join(facts, " · ") + "\n\n")
	}
	if o.Result.FinalMessage != "" {
		b.WriteString(o.Result.FinalMessage + "\n")
	}
	return b.String()
}

// Renderer turns an events file into the report Markdown (the report
// package provides it; this package does not import it).
type Renderer func(ctx context.Context, eventsFile string) (string, error)

// FinalizeOptions configure Finalize.
type FinalizeOptions struct {
	EventsFile string
	Sticky     *Sticky // the comment to update; nil: OpenSticky, else no comment
	// OpenSticky, when Sticky is nil, returns the comment to update (nil:
	// none). It is called only after the outputs and the summary are
	// written, so its API calls (the token's identity) cannot lose them.
	OpenSticky func(ctx context.Context) (*Sticky, error)
	// CreateMissing posts the comment when the run never did; by default
	// only a comment the run started is updated.
	CreateMissing bool
	Render        Renderer // nil: Outcome.Markdown
	OutputPath    string   // GITHUB_OUTPUT of the finalize step; "" skips outputs
	SummaryPath   string   // GITHUB_STEP_SUMMARY of the finalize step; "" skips
	// Timeout bounds the API calls (0: 10s); they run even when ctx is
	// already cancelled, as in an `if: cancelled()` step.
	Timeout time.Duration
}

// incompleteNote explains, under the report's heading, why a log without
// run.finished (which the report calls incomplete) has status cancelled.
const incompleteNote = "> **incomplete** (no `run.finished`: cancelled or killed): the action reports status `cancelled`, exit code 130.\n\n"

// Finalize brings the sticky comment in line with an events file, for
// `runner github finalize --events FILE` in an `if: cancelled() ||
// failure()` step: a run killed before its last event is reported as
// cancelled. The outputs (all but comment-url) and the step summary are
// written first, from the events file alone, so no API failure can lose
// them; comment-url follows once the comment is updated. Only a comment
// the run started is updated unless CreateMissing is set; a Sticky without
// Task takes the task name from the events. Running it again changes
// nothing (the comment is edited only when its body differs).
func Finalize(ctx context.Context, o FinalizeOptions) (RunOutputs, error) {
	f, err := os.Open(o.EventsFile)
	if err != nil {
		err = fmt.Errorf("github: finalize: %w", err)
		if o.SummaryPath != "" { // the job page says why there is no report
			err = errors.Join(err, AppendSummary(o.SummaryPath, fmt.Sprintf("### runner: no report\n\n%s\n", err)))
		}
		return RunOutputs{}, err
	}
	outcome, err := ReadOutcome(f)
	_ = f.Close()
	if err != nil {
		return RunOutputs{}, err
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	report := finalReport(ctx, o, outcome)
	out := RunOutputs{Status: outcome.Result.Status, ExitCode: outcome.Result.ExitCode, PatchPath: outcome.Result.PatchPath,
		EventsPath: o.EventsFile, CostUSD: outcome.Result.CostUSD, PRURL: outcome.URL(event.PublishPullRequest),
		ReviewURL:        outcome.URL(event.PublishReview),
		StructuredOutput: structuredText(outcome.Result.StructuredOutput),
		Denials:          outcome.Result.Denials, DeniedCalls: outcome.Result.DeniedCalls}
	var errs []error
	if o.OutputPath != "" {
		list := slices.DeleteFunc(out.List(), func(x Output) bool { return x.Name == "comment-url" })
		errs = append(errs, WriteOutputs(o.OutputPath, list...))
	}
	if o.SummaryPath != "" && !summaryHolds(o.SummaryPath, outcome.RunID) { // exec wrote it unless killed
		errs = append(errs, AppendSummary(o.SummaryPath, SummaryMarker(outcome.RunID)+report))
	}
	sticky := o.Sticky
	if sticky == nil && o.OpenSticky != nil {
		sticky, err = o.OpenSticky(ctx)
		errs = append(errs, err)
	}
	if sticky != nil {
		if sticky.Task == "" {
			sticky.Task = outcome.Task
		}
		if o.CreateMissing {
			out.CommentURL, err = sticky.Finish(ctx, report)
		} else {
			out.CommentURL, _, err = sticky.Update(ctx, report)
		}
		errs = append(errs, err)
	}
	if o.OutputPath != "" && out.CommentURL != "" {
		errs = append(errs, WriteOutputs(o.OutputPath, Output{Name: "comment-url", Value: out.CommentURL}))
	}
	return out, errors.Join(errs...)
}

// finalReport renders the report (Outcome.Markdown when there is no
// renderer or it fails); for a log without run.finished the renderer's
// report gets a note under its heading tying "incomplete" to the
// cancelled status.
func finalReport(ctx context.Context, o FinalizeOptions, outcome Outcome) string {
	if o.Render == nil {
		return outcome.Markdown()
	}
	r, err := o.Render(ctx, o.EventsFile)
	if err != nil || strings.TrimSpace(r) == "" {
		return outcome.Markdown()
	}
	if outcome.Finished {
		return r
	}
	if head, rest, ok := strings.Cut(r, "\n\n"); ok && strings.HasPrefix(head, "#") {
		return head + "\n\n" + incompleteNote + rest
	}
	return incompleteNote + r
}

// structuredText is a structured output as an output value ("" for none).
func structuredText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// SummaryMarker starts a run's report in the step summary: an HTML
// comment naming the run, so that `runner github finalize` adds the
// report only when the run could not (it was killed).
func SummaryMarker(runID string) string { return "<!-- runner run " + runID + " -->\n" }

// summaryHolds reports whether the step summary at path holds the report
// of run runID.
func summaryHolds(path, runID string) bool {
	data, err := os.ReadFile(path)
	return err == nil && runID != "" && strings.Contains(string(data), SummaryMarker(runID))
}
