package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/report"
	"github.com/seed43ef5acb/runner/tools"
)

// newRunID returns a run id that sorts by start time and does not collide:
// UTC time to the second and 4 random bytes, e.g. 20261130T022300Z-9f3a01bc.
func newRunID(now time.Time) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// openOutputs creates the out dir and the event sinks: the JSONL log (a
// file, or stdout with --events -), the console view on stderr (unless
// --quiet; GitHub Actions mode under Actions), all behind the redactor.
func (r *execRun) openOutputs(_ context.Context) error {
	r.runID = newRunID(r.start)
	r.outDir = r.opts.Out
	if r.outDir == "" {
		r.outDir = filepath.Join(".runner", "runs", r.runID)
	}
	// The paths the user gave are tried before anything is made: a
	// --patch that cannot be written was found only after the whole run
	// (paid, the --isolate copy gone), and a bad --events left an empty
	// out dir (newcomer2 N4).
	for _, f := range []struct{ flag, path string }{{"--events", r.opts.Events}, {"--patch", r.opts.Patch}} {
		if f.path == "" || f.path == "-" && f.flag == "--events" {
			continue
		}
		if err := tryCreate(f.path); err != nil {
			return fmt.Errorf("%w: %s %s: %w (give a file in a directory that exists or can be made)", ErrUsage, f.flag, f.path, err)
		}
	}
	r.noteReusedOut()
	if err := r.outFiles.MkdirAll(r.outDir); err != nil {
		if r.opts.Out != "" {
			return fmt.Errorf("%w: --out %s: %w (give a directory that exists or can be made)", ErrUsage, r.opts.Out, err)
		}
		return fmt.Errorf("%w: out dir: %w", ErrInfra, err)
	}
	if r.opts.Out == "" {
		ignoreRunnerDir(".runner")
	}
	r.outFiles.Watch(r.outDir, r.repo)
	r.patchPath = cmp.Or(r.opts.Patch, filepath.Join(r.outDir, report.PatchFile))
	r.modes.guard(r.outDir, filepath.Dir(r.patchPath))
	r.redactor = event.NewRedactor(r.opts.Environ, r.secretValues()...)
	if r.opts.Events == "-" {
		r.eventsCopy = &bytes.Buffer{}
		r.writer = event.NewWriter(io.MultiWriter(r.opts.Stdout, r.eventsCopy), r.runID)
	} else {
		r.eventsPath = cmp.Or(r.opts.Events, filepath.Join(r.outDir, report.EventsFile))
		if err := os.MkdirAll(filepath.Dir(r.eventsPath), 0o755); err != nil {
			return fmt.Errorf("%w: events: %w", ErrInfra, err)
		}
		r.modes.guard(filepath.Dir(r.eventsPath))
		f, err := r.outFiles.Create(r.eventsPath)
		if err != nil {
			return fmt.Errorf("%w: events: create event log: %w", ErrInfra, err)
		}
		r.writer = event.Own(f, r.runID)
	}
	r.denials = &denialLog{}
	r.logGuard = &logGuard{next: r.writer, stop: r.stopMain}
	sinks := []event.Sink{r.logGuard, r.denials}
	if !r.opts.Quiet {
		tty := isTerminal(r.opts.Stderr)
		r.console = event.NewConsole(r.opts.Stderr, event.ConsoleOptions{
			TTY: tty, Color: tty && r.getenv("NO_COLOR") == "",
			GitHubActions: r.getenv("GITHUB_ACTIONS") == "true",
			RetryAttempts: retryAttempts(r.opts.Backoff),
		})
		sinks = append(sinks, r.console)
	}
	r.sink = event.Redacting(event.Multi(sinks...), r.redactor)
	return nil
}

// tryCreate makes path's directory and checks that path can be opened
// for writing; a file it created for the check is removed again.
func tryCreate(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_ = f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		_ = os.Remove(path)
	}
	return nil
}

// runnerDirIgnore is the .gitignore the runner puts in its default state
// directory, so that git status stays clean and a `git add -A` after a
// run in the repository does not commit the runs' logs and histories.
const runnerDirIgnore = "# runner's own state (run logs, patches, conversation histories): never committed\n*\n"

// ignoreRunnerDir writes dir/.gitignore (runnerDirIgnore) unless one is
// there: a user's own is left as it is. It is a convenience: when it cannot
// be written (a read-only dir), the run goes on without it.
func ignoreRunnerDir(dir string) {
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return // there already, or not writable: nothing to do
	}
	_, werr := f.WriteString(runnerDirIgnore)
	if cerr := f.Close(); werr != nil || cerr != nil {
		_ = os.Remove(f.Name()) // a partial one would ignore less than it says
	}
}

// retryAttempts is how many retries of a model call the session makes
// with backoff b (runner's default for a zero Attempts).
func retryAttempts(b runner.Backoff) int {
	if b.Attempts <= 0 {
		return runner.DefaultBackoffTries
	}
	return b.Attempts
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// emitStarted writes run.started (base_url "replay:<cassette>" when
// replaying).
func (r *execRun) emitStarted(_ context.Context) error {
	r.started = true
	l := r.limits()
	return r.emit(event.RunStarted{
		Task: r.spec.Name, SpecPath: r.spec.Path, SpecSHA256: r.specSHA,
		Repo: r.repo, BaseTree: string(r.base), Model: r.modelName, BaseURL: r.endpoint(),
		RunnerVersion: Version(), Inputs: r.inputs,
		Limits: event.Limits{
			MaxSteps: l.MaxSteps, MaxCostUSD: l.MaxCostUSD, MaxTokens: l.MaxTokens,
			Timeout: durationString(l.Timeout),
			// The effective values: a default applies where the spec is silent.
			ToolTimeout:       durationString(cmp.Or(l.ToolTimeout, tools.DefaultBashTimeout)),
			MaxDenials:        cmp.Or(l.MaxDenials, runner.DefaultMaxDenials),
			BinaryPatchBytes:  r.binaryPatchLimit(),
			StreamIdleTimeout: llm.DefaultIdleTimeout.String(),
			Total:             r.totalEvent(),
		},
		Sandbox:     r.sandboxInfo(),
		Continues:   r.continuedEvent(),
		MCP:         r.mcpInfo(),
		PullRequest: r.prSessionEvent(),
	})
}

// emit writes one event; a log that cannot be written is an infrastructure
// failure.
func (r *execRun) emit(p event.Payload) error {
	if err := r.sink.Emit(p); err != nil {
		return fmt.Errorf("%w: event %s: %w", ErrInfra, p.EventType(), err)
	}
	return nil
}

func durationString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// runStatus is how the run ended.
type runStatus struct {
	Status  event.Status
	Code    int
	Class   event.ErrorClass
	Message string
}

// decideStatus turns the outcome of the main stages into the run's status:
// a signal wins, then a failed stage, then the agent's own status, then the
// checks.
func (r *execRun) decideStatus(ctx context.Context, mainErr error) runStatus {
	switch {
	case ctx.Err() != nil:
		return runStatus{event.StatusCancelled, ExitCancelled, event.ClassCancelled,
			cancelMessage(context.Cause(ctx))}
	case r.logGuard.failed() != nil:
		// The run was stopped: going on unrecorded would lose its record.
		return runStatus{event.StatusError, ExitInfra, event.ClassInfra, fmt.Sprintf(
			"the event log could not be written, so the run was stopped: %v; make room where the log goes (--out, --events) and run again",
			r.logGuard.failed())}
	case len(r.violations) > 0:
		return runStatus{event.StatusViolation, ExitTaskFailed, event.ClassViolation, r.violations[0].Message}
	case mainErr != nil:
		code := ExitCode(mainErr)
		if code == ExitCancelled {
			return runStatus{event.StatusCancelled, code, event.ClassCancelled, mainErr.Error()}
		}
		if code == ExitUsage {
			return runStatus{event.StatusError, code, event.ClassUsage, mainErr.Error()}
		}
		return runStatus{event.StatusError, ExitInfra, event.ClassInfra, mainErr.Error()}
	case r.ranAgent && r.result.Status != event.StatusSuccess:
		st := runStatus{Status: r.result.Status, Code: statusCode(r.result.Status)}
		if e := r.result.RunError(); e != nil {
			st.Class, st.Message = e.Class, e.Message
		}
		if st.Status == event.StatusTimeout {
			st.Message = r.timeoutMessage()
		}
		if cassetteMisfit(r.result.Err) {
			st.Code, st.Class = ExitUsage, event.ClassUsage // the --replay cassette does not fit this run
		}
		return st
	case r.checksErr != nil:
		return runStatus{event.StatusFailed, ExitTaskFailed, event.ClassChecks, r.checksErr.Error()}
	case len(omittedFiles(r.files)) > 0:
		return runStatus{event.StatusFailed, ExitTaskFailed, event.ClassPatchIncomplete, omittedMessage(r.files, r.binaryPatchLimit())}
	case r.ranAgent && r.result.DeniedLast != "" && len(r.spec.Checks) == 0:
		// Nothing verifies the answer, and the agent's last attempt was refused.
		return runStatus{event.StatusFailed, ExitTaskFailed, event.ClassBlocked, fmt.Sprintf(
			"the agent finished right after a denied call (%s) and no call succeeded after it, so its answer is unverified: "+
				"allow what the task needs in permissions, or add a check that verifies the task", r.result.DeniedLast)}
	}
	return runStatus{Status: event.StatusSuccess, Code: ExitOK}
}

// statusCode maps a run status to the exit code.
func statusCode(status event.Status) int {
	switch status {
	case event.StatusSuccess:
		return ExitOK
	case event.StatusCancelled:
		return ExitCancelled
	case event.StatusError:
		return ExitInfra
	default: // failed, max_steps, budget_exceeded, timeout, blocked
		return ExitTaskFailed
	}
}

// runFinished is the run.finished record of a run that ended with st.
func (r *execRun) runFinished(st *runStatus) event.RunFinished {
	fin := event.RunFinished{
		Status: st.Status, ExitCode: st.Code, FinalMessage: r.result.FinalMessage,
		StructuredOutput: r.result.StructuredOutput, Steps: r.result.Steps,
		Tokens: r.result.Tokens, CostUSD: r.result.CostUSD,
		DurationMS: time.Since(r.start).Milliseconds(), PatchPath: r.reportedPatch(),
		FilesChanged: len(r.files), Review: r.review, History: r.history.digest(),
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

// emitStartedLate writes run.started for a run that failed before its
// stage, ahead of the final stages' events.
func (r *execRun) emitStartedLate(ctx context.Context) error {
	if r.started || r.writer == nil {
		return nil
	}
	return r.emitStarted(ctx)
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
	_ = os.Remove(filepath.Join(r.outDir, toolOutputDir)) // only when empty
	if !r.opts.Quiet {
		fmt.Fprintf(r.opts.Stderr, "Outputs: %s\n", r.outDir)
	}
	if r.opts.Events != "-" {
		if so := r.structuredOutput(); so != nil {
			fmt.Fprintln(r.opts.Stdout, string(so))
		} else if strings.TrimSpace(r.result.FinalMessage) != "" {
			fmt.Fprintln(r.opts.Stdout, r.redactor.Redact(r.result.FinalMessage))
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
	defaultLog := filepath.Join(r.outDir, report.EventsFile)
	if r.eventsPath != "" && sameFile(r.eventsPath, defaultLog) && sameFile(r.patchPath, filepath.Join(r.outDir, report.PatchFile)) {
		_, err := report.WriteOut(ctx, r.outDir, opts)
		return err
	}
	var log io.Reader = r.eventsCopy
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
