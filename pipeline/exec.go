package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/internal/mirror"
	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
)

// Deadlines of the final stages, which run on contexts that survive a
// cancel: finalTimeout each normally, their grace once the run was
// cancelled. The graces add up to under 5 s: the process must be gone
// within 5 s of a signal (GitHub Actions kills 7.5 s after its SIGINT).
// Each stage has its own, so a slow final snapshot cannot eat the time
// run.finished and result.json need.
const finalTimeout = 2 * time.Minute

// Graces of the final stages after a cancel: the patch needs the most,
// run.finished and result.json (outputs) next, the rest defaultGrace.
const (
	patchGrace   = 3 * time.Second
	outputsGrace = 1200 * time.Millisecond
	defaultGrace = 500 * time.Millisecond
)

// finalStage is a final stage with the properties finish reads.
type finalStage struct {
	stageFunc
	grace       time.Duration // its time after a cancel; 0: defaultGrace
	decideFirst bool          // the run's status is decided before it runs
	failsRun    bool          // its failure is the run's error, not a warning
}

// execRun is the state the stages of one `runner exec` share. Each stage
// fills in what the later ones read.
type execRun struct {
	opts  ExecOptions
	log   *slog.Logger
	start time.Time
	// dry is Check's run: its setup checks only, with no work tree, and
	// nothing written (no --record file)
	dry bool

	specState      // spec stage
	modelState     // model stage
	githubState    // github and comment stages
	workspaceState // workspace, temp, isolate and sandbox stages
	guardState     // tripwire and gates stages, the runner's own files
	outState       // out stage
	snapshotState  // snapshot stage
	mcpState       // mcp stages
	continueState  // continue, history and pr-session stages
	agentState     // agent and checks stages
	finalState     // patch, outputs, delivery and review stages
}

// Exec runs a task: the stages of the exec pipeline in order, then the
// final stages (patch, outputs, publish), which run on every path — after
// an error, a panic, a timeout or a cancel — so that the log always ends
// with run.finished and the patch, result.json and summary.md are written.
// Errors map to exit codes with ExitCode; a run that ended with a status
// other than success returns an *ExitError carrying its exit code. The
// Result says what the run did, whatever the error (Result.Reported).
//
// Errors found before the out dir exists (bad usage, an invalid spec, a
// missing API key) are returned at once and write nothing.
func Exec(ctx context.Context, opts ExecOptions) (Result, error) {
	r := &execRun{opts: opts, start: time.Now(), log: loggerOr(opts.Logger), guardState: guardState{outFiles: mirror.New(), modes: ownfiles.NewModes()}, mcpState: mcpState{protected: &protectedValues{}}}
	if r.opts.Stdout == nil {
		r.opts.Stdout = io.Discard
	}
	if r.opts.Stderr == nil {
		r.opts.Stderr = io.Discard
	}
	r.maskSecrets()
	// The main stages' context: a failed log write stops them (logGuard).
	mctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r.stopMain = stop
	if err := runStages(ctx, r.log, r.setupStages()); err != nil {
		r.closeRecord()
		r.removeTemp()
		if notTriggered(err) {
			return Result{}, nil
		}
		return Result{}, r.setupFailed(err)
	}
	mainErr := runStages(mctx, r.log, r.mainStages())
	err := r.finish(ctx, mainErr)
	return r.outcome(), err
}

// outcome is the Result of a run whose final stages ran.
func (r *execRun) outcome() Result {
	res := Result{RunID: r.runID, OutDir: r.outDir, EventsPath: r.eventsPath, Denials: r.result.Denials,
		CommentURL: r.commentURL, PRURL: r.prURL}
	if r.review != nil {
		res.ReviewURL = r.review.URL
	}
	if len(r.files) > 0 {
		res.Files = eventFiles(r.files)
	}
	res.SecretPaths = r.secretPaths
	res.IgnoredWritten = r.ignored
	if f := r.finished; f != nil {
		res.Reported, res.Status, res.ExitCode, res.Error = true, f.Status, f.ExitCode, f.Error
		res.FinalMessage, res.Steps, res.Tokens, res.CostUSD, res.PatchPath = f.FinalMessage, f.Steps, f.Tokens, f.CostUSD, f.PatchPath
	}
	return res
}

// setupStages check everything that can be checked before anything is
// written; their errors end the run with no outputs.
func (r *execRun) setupStages() []Stage {
	return []Stage{
		// First: nothing else makes sense with an invalid spec or inputs.
		stageFunc{"spec", r.loadSpec},
		// With the spec: a missing ${NAME} or server program is an invalid task.
		stageFunc{"mcp-config", r.resolveMCP},
		// A --continue whose history is gone, corrupt or of another spec is
		// refused before anything is written, and before the provider's
		// settings: the first error a user sees is the first to fix.
		stageFunc{"continue", r.loadContinued},
		// Before touching the disk: fail fast on a missing key or cassette.
		stageFunc{"model", r.setupModel},
		// Before any model call: the trigger gate may end the run here.
		stageFunc{"github", r.setupGitHub},
		// After the gate: a comment on a pull request (github.continue)
		// fetches the history the runner left there, or starts fresh.
		stageFunc{"pr-session", r.setupPRSession},
		// The history the pull request's session fetched, checked the same way.
		stageFunc{"pr-continue", r.loadPRContinued},
		// Once the prompt is final (the GitHub event renders it): a
		// cassette recorded for another task is refused, unwritten.
		stageFunc{"replay", r.checkReplay},
		// Before the out dir: a missing repo is a usage error, not a run.
		stageFunc{"workspace", r.prepareWorkspace},
		// Once the spec is known: mode required fails here, unwritten.
		stageFunc{"sandbox", r.checkSandbox},
		// Last of the setup: from here on every path ends in run.finished.
		stageFunc{"out", r.openOutputs},
	}
}

// mainStages do the work; the first failure skips the rest.
func (r *execRun) mainStages() []Stage {
	return []Stage{
		// First, once run.finished is sure to follow: the run's temporary
		// directory, and the leftovers of killed runs collected.
		stageFunc{"temp", r.makeRunTemp},
		// After the out dir: a long copy can be cancelled, and a file that
		// vanishes during it is reported, both recorded in the log.
		stageFunc{"isolate", r.isolateCopy},
		// On the final work tree, before the sandbox (which hides the files
		// the config included) and the tripwire (which records .git): the
		// workflow's git credentials out of the commands' reach.
		stageFunc{"git-credentials", r.hideGitCredentials},
		// On the final work tree: the sandbox of bash and the checks.
		stageFunc{"sandbox", r.setupSandbox},
		// Once the layers are known, before any command (MCP servers, the
		// agent): where commands could write the out dir, mirror it.
		stageFunc{"mirror", r.startMirror},
		// Before the agent: the base tree is what the patch is taken against.
		stageFunc{"snapshot", r.baseSnapshot},
		// With this run's store locked (so never taken): old stores collected.
		stageFunc{"store-gc", r.storeGC},
		// Again, with the work tree's lock held: a run that waited for
		// another found the credentials that run had taken out, put back
		// since.
		stageFunc{"git-credentials-locked", r.hideGitCredentialsLocked},
		// With the base: what .git and the submodules held before any command.
		stageFunc{"tripwire", r.armTripwire},
		// With the snapshot: a continued run's work tree must be the one
		// the earlier run left, and its base becomes this run's.
		stageFunc{"continue", r.checkContinued},
		// After the base snapshot (what a server writes is in the patch) and
		// before run.started, which records the servers and their holes.
		stageFunc{"mcp", r.startMCP},
		// run.started names the base tree: written now if it is recorded,
		// else held, with the session's events, until a tool needs it.
		stageFunc{"started", r.holdStart},
		// Before the agent: the conversation is recorded from its first
		// message (held with run.started).
		stageFunc{"history", r.startHistory},
		// Once the run is under way: the sticky comment says it started.
		stageFunc{"comment", r.startComment},
		// The agent loop, until the model finishes or a stop rule fires.
		stageFunc{"agent", r.runAgent},
		// After the agent: failures go back to the same session.
		stageFunc{"checks", r.runChecks},
	}
}

// finalStages run on every path, on a context that survives a cancel.
// The status is decided after the patch; the delivery stages may turn a
// success into delivery_failed.
func (r *execRun) finalStages(status *runStatus) []finalStage {
	return []finalStage{
		// First: run.started, when the run failed before it (a refused
		// --continue), so the log and the console begin with it.
		{stageFunc: stageFunc{"started-late", r.emitStartedLate}},
		// After the work tree stopped changing: the patch of the whole run.
		// A run without its patch is an error.
		{stageFunc: stageFunc{"patch", r.finalPatch}, grace: patchGrace, failsRun: true},
		// Before any outcome is written: the patch judged by the edit rules,
		// .git's tripwire, secrets in the patch.
		{stageFunc: stageFunc{"gates", r.runGates}},
		// Before run.finished: a failed push or pull request is part of the
		// outcome, recorded in the log. The status is decided once the
		// patch is known.
		{stageFunc: stageFunc{"deliver", func(ctx context.Context) error { return r.deliver(ctx, status) }}, decideFirst: true},
		// After the work is known good, before the comment: the review is
		// part of the delivery the comment reports.
		{stageFunc: stageFunc{"review", func(ctx context.Context) error { return r.postReview(ctx, status) }}},
		// After delivery, before run.finished: the comment shows the report
		// run.finished will give, delivery included.
		{stageFunc: stageFunc{"comment", func(ctx context.Context) error { return r.finishComment(ctx, status) }}},
		// run.finished must be the log's last line, after the patch and
		// publish events.
		{stageFunc: stageFunc{"outputs", func(ctx context.Context) error { return r.writeOutputs(ctx, status) }}, grace: outputsGrace},
		// Last: the step summary and outputs, with the final status and
		// every URL, never a status written before delivery.
		{stageFunc: stageFunc{"github", func(ctx context.Context) error { return r.writeGitHubOutputs(ctx, status) }}},
	}
}

// stopCommands ends every process that runs for the agent: the MCP stdio
// servers, then the sandbox's zygotes with whatever they still run (a
// leftover of the last command or check). Called first when the run
// finishes, so the final snapshot, the out dir's check and the outputs
// see a tree no command changes any more.
func (r *execRun) stopCommands() {
	r.stopMCP()
	if r.sandbox != nil {
		_ = r.sandbox.Close() // the network proxy stays: run.finished reports what it saw
	}
}

// finish runs the final stages and turns the run's status into Exec's error.
func (r *execRun) finish(ctx context.Context, mainErr error) error {
	defer r.removeTemp()
	// Before anything reads the base tree or closes the store: the base
	// snapshot's goroutine ends (its walk stops on a cancel). Its error
	// was a main stage's.
	_ = r.waitBase()
	// Before the final snapshot: stdio servers and leftovers run in the
	// work tree. Then, with no command left, this run's own files are
	// checked against their mirror.
	r.stopCommands()
	r.modes.Restore() // a leftover may have changed them after the last command
	r.modes.FixTree(r.outDir)
	r.restoreOut()
	status := &runStatus{}
	var finalErrs []error
	for _, s := range r.finalStages(status) {
		if s.decideFirst {
			*status = r.decideStatus(ctx, mainErr)
		}
		fctx, cancel := finalContext(ctx, cmp.Or(s.grace, defaultGrace))
		err := runStage(fctx, r.log, s)
		cancel()
		if err != nil {
			if s.failsRun {
				mainErr = errors.Join(mainErr, err)
			}
			finalErrs = append(finalErrs, err)
			r.log.Warn("final stage failed", "stage", s.Name(), "error", err)
		}
	}
	// After the tripwire gate and the push: no command runs any more.
	if err := r.restoreGitCredentials(); err != nil {
		finalErrs = append(finalErrs, err)
	}
	r.closeAll()
	if status.Code == ExitOK {
		if len(finalErrs) > 0 { // printed once, by the caller
			return r.redacted(fmt.Errorf("%w: %w", ErrInfra, errors.Join(finalErrs...)))
		}
		return nil
	}
	st := *status
	st.Message = r.redactor.Redact(st.Message) // the CLI prints it as the last line on stderr
	for _, err := range finalErrs {
		// Printed here unless the status message carries it (a failed
		// patch is the run's error): each error once on stderr.
		if text := r.redactor.Redact(err.Error()); !strings.Contains(st.Message, text) {
			r.printUntrusted(r.opts.Stderr, "runner: "+text)
		}
	}
	err := statusError(st)
	// Under Actions the console's ::error annotation of run.finished was
	// the error line: the CLI does not print it a second time.
	err.Reported = r.inActions() && !r.opts.Quiet && r.finished != nil
	return err
}

// redactedError is an error whose text was redacted; errors.Is and As
// still see the original chain.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redacted returns err with its text redacted (nil stays nil).
func (r *execRun) redacted(err error) error {
	if err == nil || r.redactor == nil {
		return err
	}
	return &redactedError{err: err, text: r.redactor.Redact(err.Error())}
}

// finalContext is the context of a final stage: not cancelled with ctx,
// bounded by finalTimeout, and by grace once ctx is cancelled.
func finalContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
	// A timer left behind after the final stages only cancels a context
	// nobody uses any more.
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return fctx, func() {
		stop()
		cancel()
	}
}

// loggerOr is l, or a logger that discards.
func loggerOr(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
