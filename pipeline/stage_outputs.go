package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/runner/report"
)

// runFinished is the run.finished record of a run that ended with st.
func (r *execRun) runFinished(st *runStatus) event.RunFinished {
	fin := event.RunFinished{
		Status: st.Status, ExitCode: st.Code, FinalMessage: r.result.FinalMessage,
		StructuredOutput: r.result.StructuredOutput, Steps: r.result.Steps,
		Tokens: r.result.Tokens, CostUSD: r.result.CostUSD,
		DurationMS: time.Since(r.start).Milliseconds(), PatchPath: r.reportedPatch(),
		FilesChanged: len(r.files), Review: r.review, PRURL: r.prURL, CommentURL: r.commentURL, History: r.history.Digest(),
		IgnoredWritten: r.ignored,
	}
	fin.Denials, fin.DeniedCalls = r.denials.snapshot()
	if st.Status != event.StatusSuccess {
		fin.Error = &event.RunError{Class: cmp.Or(st.Class, event.ErrorClass(st.Status)), Message: cmp.Or(st.Message, string(st.Status))}
	}
	return fin
}

// structuredOutput is the run's structured output (redacted), nil when
// the task declares none or the model gave none.
func (r *execRun) structuredOutput() json.RawMessage {
	so := r.result.StructuredOutput
	if len(so) == 0 || string(so) == "null" {
		return nil
	}
	if r.redactor != nil {
		so = r.redactor.RedactJSON(so)
	}
	return so
}

// writeOutputs writes run.finished (the log's last line), closes the log,
// then result.json and summary.md, and prints the run's answer on stdout
// unless the log goes there: the structured output as one JSON document
// when the task has one (`runner exec review.yaml | jq .verdict`), else
// the final message.
func (r *execRun) writeOutputs(ctx context.Context, st *runStatus) error {
	if !r.started {
		_ = r.emitStarted(ctx) // a run that failed before the base snapshot
	}
	network := r.emitNetwork() // one event per host:port, before run.finished
	fin := r.runFinished(st)
	fin.Network = network
	emitErr := r.emit(fin)
	closeErr := r.closeSinks()
	// Once run.finished is written, result.json and summary.md follow
	// whatever the stage's deadline: two small local files, and an fsync
	// slowed by a busy disk (a big --isolate copy just cancelled) must not
	// leave a log without them.
	if err := r.writeReport(context.WithoutCancel(ctx)); err != nil {
		return errors.Join(emitErr, closeErr, err)
	}
	r.finished = &fin
	_ = os.Remove(filepath.Join(r.outDir, outdir.ToolOutputDir)) // only when empty
	if !r.opts.Quiet {
		fmt.Fprintf(r.opts.Stderr, "Outputs: %s%s\n", r.outDir, outFiles(r.outDir))
	}
	if r.opts.Events != "-" {
		// A run that did not succeed says so beside the agent's claim.
		note := ""
		if st.Status != event.StatusSuccess {
			note = fmt.Sprintf("runner: the run did not succeed (%s, exit %d): the agent's last message, unverified:", st.Status, st.Code)
		}
		if so := r.structuredOutput(); so != nil {
			if note != "" {
				fmt.Fprintln(r.opts.Stderr, note+" the structured output on stdout") // stdout stays JSON
			}
			// JSON stays JSON (a script parses it): escaped, not fenced.
			fmt.Fprintln(r.opts.Stdout, string(workflowcmd.EscapeJSON(so)))
		} else if strings.TrimSpace(r.result.FinalMessage) != "" {
			if note != "" {
				fmt.Fprintln(r.opts.Stdout, note)
			}
			r.printUntrusted(r.opts.Stdout, r.redactor.Redact(r.result.FinalMessage))
		}
	}
	return errors.Join(emitErr, closeErr)
}

// closeSinks closes the log and the console.
func (r *execRun) closeSinks() error {
	var errs []error
	if r.console != nil {
		errs = append(errs, r.console.Close())
		r.console = nil
	}
	if r.writer != nil {
		errs = append(errs, r.writer.Close())
		r.writer = nil
	}
	return errors.Join(errs...)
}

// reportedPatch is the patch path that run.finished, result.json and the
// GitHub outputs carry: "" when no file changed, as the Action's patch-path
// output documents. The (empty) patch file is still written so the out dir
// is complete.
func (r *execRun) reportedPatch() string {
	if len(r.files) == 0 {
		return ""
	}
	return r.patchPath
}

// writeReport writes result.json and summary.md into the out dir from the
// log, wherever it went.
func (r *execRun) writeReport(ctx context.Context) error {
	opts := report.MarkdownOptions{Redactor: r.redactor}
	defaultLog := filepath.Join(r.outDir, outdir.EventsFile)
	if r.eventsPath != "" && sameFile(r.eventsPath, defaultLog) && sameFile(r.patchPath, filepath.Join(r.outDir, outdir.PatchFile)) {
		_, err := report.WriteOut(ctx, r.outDir, opts)
		return err
	}
	var log io.Reader = r.eventsCopy
	if r.stdoutLog != nil && r.stdoutLog.failed != nil {
		if err := report.WriteEvents(ctx, r.outDir, r.eventsCopy.Bytes()); err != nil {
			return fmt.Errorf("%w: %w", ErrInfra, err)
		}
		if !r.opts.Quiet {
			fmt.Fprintf(r.opts.Stderr, "runner: the event log could not go on to stdout (%v): it is whole in %s\n",
				r.stdoutLog.failed, filepath.Join(r.outDir, outdir.EventsFile))
		}
	}
	if r.eventsPath != "" {
		f, err := os.Open(r.eventsPath)
		if err != nil {
			return fmt.Errorf("%w: read events: %w", ErrInfra, err)
		}
		defer f.Close()
		log = f
	}
	recs, err := event.ReadLog(log)
	if err != nil {
		return fmt.Errorf("%w: read events: %w", ErrInfra, err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("%w: %w", ErrInfra, report.ErrNoEvents)
	}
	if patch, size, err := report.ReadPatchExcerpt(r.patchPath); err == nil {
		opts.Patch, opts.PatchSize = patch, size
	}
	rep, err := report.Build(recs)
	if err != nil {
		return fmt.Errorf("%w: report: %w", ErrInfra, err)
	}
	if err := report.WriteResult(ctx, r.outDir, recs[len(recs)-1]); err != nil {
		return fmt.Errorf("%w: %w", ErrInfra, err)
	}
	return report.WriteSummary(ctx, r.outDir, rep, opts)
}

// sameFile reports whether two paths name the same file, by their absolute
// forms.
func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// closeAll releases what the run holds, once the outputs are written.
func (r *execRun) closeAll() {
	r.closeHistory()
	_ = r.closeSinks()
	if r.store != nil {
		_ = r.store.Close()
		r.store = nil
	}
	r.closeRecord()
}

// printUntrusted writes text the runner did not write (the model's final
// message, a tool's or a server's words) and a newline to w; under GitHub
// Actions inside a ::stop-commands:: fence, so it cannot run workflow
// commands (::add-mask::, ::error, ##[set-output …]).
func (r *execRun) printUntrusted(w io.Writer, text string) {
	if r.inActions() {
		_, _ = io.WriteString(w, workflowcmd.Fence(text, workflowcmd.StopToken()))
		return
	}
	fmt.Fprintln(w, text)
}

// outFiles names the run's files (outdir.Files) that are in dir, for the
// Outputs line: " (changes.patch, summary.md, events.jsonl, result.json,
// history.jsonl)". A
// --patch or --events path elsewhere leaves its file out; "" when none is.
func outFiles(dir string) string {
	var have []string
	for _, name := range outdir.Files() {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			have = append(have, name)
		}
	}
	if len(have) == 0 {
		return ""
	}
	return " (" + strings.Join(have, ", ") + ")"
}
