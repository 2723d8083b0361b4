package pipeline

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/mirror"
	"github.com/seed43ef5acb/runner/internal/telemetry"
	"github.com/seed43ef5acb/runner/internal/tempdir"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/pipeline/gate"
	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/mcp"
	"github.com/seed43ef5acb/runner/tools/sandbox"
	"github.com/seed43ef5acb/runner/tools/sandbox/netproxy"
)

// The state of one run, by phase: each stage fills in its part, later ones
// read it. execRun embeds them all; a test builds the parts it needs.

// specState is what the spec stage read: the spec, its inputs and prompt.
type specState struct {
	spec    *spec.Spec
	specSHA string
	given   map[string]string // inputs as set on the command line
	inputs  map[string]string // resolved, defaults included
	prompt  string
}

// modelState is the model the model stage set up.
type modelState struct {
	modelName string
	baseURL   string
	model     runner.Model
	wire      llm.Wire // the API the model is reached over
	effort    string   // the reasoning effort sent; "" when none or dropped
	catalog   llm.Catalog
	record    io.Closer // the --record file; nil when not recording
	// replayPrompt is the prompt the --replay cassette was recorded for.
	replayPrompt string
	// tel is this run's telemetry (telemetryRun), shared by its HTTP
	// transports and its event sink.
	tel *telemetry.Run
}

// githubState is the GitHub Actions context (nil outside Actions) and
// the sticky comment.
type githubState struct {
	gh     *github.Actions
	sticky *github.Sticky
}

// workspaceState is where the agent works: the work tree, its sandbox
// and the run's temporary directory.
type workspaceState struct {
	repo     string           // the user's work tree (absolute)
	workTree string           // where the agent works: repo, or its copy with --isolate
	sandbox  *sandbox.Sandbox // contains bash and the checks (sandbox stage)
	// netProxy is the proxy of sandbox.network.allow (nil without one).
	netProxy *netproxy.Server
	// sandboxPolicy is sandbox's policy, the base of each MCP stdio
	// server's own sandbox
	sandboxPolicy sandbox.Policy
	writable      []string // the holes sandbox.writable opened, expanded
	// runTemp is the run's own temporary directory (the --isolate copy,
	// its snapshot store, the sandboxes' scratch), locked while the run
	// lives and removed on every exit path; a killed run's is collected
	// when the next one starts (internal/tempdir).
	runTemp  *tempdir.Dir
	isolated bool // the work tree is the --isolate copy in runTemp
}

// guardState is what guards the run's outcome and the runner's own files.
type guardState struct {
	tripwire *gate.Tripwire
	// stateTripwire watches .runner's earlier runs where no layer does.
	stateTripwire *ownfiles.State
	specGuard     *gate.TaskSpec // the task spec in the work tree (gate task_spec)
	violations    []event.GateFailed
	// secretPaths are the changed files the secret gate found a secret in
	// (Result.SecretPaths).
	secretPaths []string
	// outFiles makes every file the runner writes while commands run (the
	// log, history, tool outputs, MCP stderr, the cassette); started
	// (mirrored) where a command could write them (startMirror), and
	// compared and put back once no command runs (restoreOut): what it
	// changed (outChanged) and could not put back (outLost)
	outFiles   *mirror.Set
	outChanged []string
	outLost    error
	// modes are the modes of the runner's own directories (the out dir,
	// the run temp dir and those above them), put back after each
	// command and before a refused write is tried again (pipeline/ownfiles)
	modes *ownfiles.Modes
	// treeReal is the work tree and the same resolved for the repairs,
	// which follow no symlink below it (treeRoot, internal/safefs)
	treeReal [2]string
}

// outState is the out dir and the event sinks (out stage).
type outState struct {
	runID      string
	outDir     string
	eventsPath string // "" when events go to stdout
	patchPath  string
	outReal    string // the out dir, resolved when made (redactOutFiles)
	writer     *event.Writer
	console    *consoleView
	sink       event.Sink
	// logSinks are the log, the denials and the console (in sink, which
	// redacts): holdStart holds them until run.started can be written
	logSinks event.Sink
	// liveSink is telemetry (nil: none): it follows the session live, its
	// spans name the model requests as they are sent
	liveSink event.Sink
	redactor *event.Redactor
	// toolRedactor blanks the exact secret values in tool results before
	// the model reads them (redactResults); nil before the agent stage
	toolRedactor *event.Redactor
	eventsCopy   *bytes.Buffer // a copy of the log when it goes to stdout
	stdoutLog    *stdoutLog    // the log's stdout side (--events -)
	denials      *denialLog    // the permission.denied events, for run.finished
	logGuard     *logGuard     // notes a failed log write and stops the main stages
	// stopMain cancels the main stages' context (nil before Exec sets it)
	stopMain func(error)
}

// snapshotState is the snapshot store and the base tree (snapshot stage).
type snapshotState struct {
	store *snapshot.Store
	base  snapshot.Tree // set by waitBase; a continued run's is the earlier base
	// baseDone closes when the base snapshot's goroutine has written
	// baseTree and baseErr (nil before the snapshot stage)
	baseDone chan struct{}
	baseTree snapshot.Tree
	baseErr  error
	baseOnce *sync.Once // adopts baseTree as base once
	// held holds the events and history records of an agent that starts
	// before the base tree is known (overlap.go); nil when it did not
	held    *heldStart
	started bool // run.started was emitted
	// since is when the work tree began to be watched for ignored files
	// written (snapshot.FileClock, before the base snapshot)
	since time.Time
}

// mcpState is the MCP servers (mcp-config and mcp stages) and the
// secret values redacted.
type mcpState struct {
	// mcp stages: the servers as resolved from the spec, the values of
	// their ${NAME} references (secrets), and the running servers
	mcpServers []mcp.Server
	mcpSecrets []string
	// envSecrets are the secret values of the protected .env* files
	// (envFileSecrets): redacted everywhere, and a patch holding one fails.
	envSecrets []string
	// envWatch is checkSandbox's watch for protected files, until
	// setupSandbox hands it to the sandbox (sandbox.Policy.Watch).
	envWatch *sandbox.Watch
	// gitCreds is what the git-credentials stage took out of the work
	// tree's git config, put back when the run ends.
	gitCreds *gitCreds
	// protected tracks the protected .env* files read for the redactors
	// (afterCommand learns the ones commands make during the run)
	protected *protectedValues
	mcp       *mcp.Set
	// mcpSandboxes hold the stdio servers, by server name
	mcpSandboxes map[string]*sandbox.Sandbox
	mcpHoles     map[string]mcpHoles
}

// continueState is the earlier run continued, this run's history and
// the pull request of a pr-session run.
type continueState struct {
	// continue stages: the earlier run this one continues (nil: fresh),
	// and this run's history.jsonl
	continued *continued
	history   *historyfile.Writer
	// pr is the pull request of a run on a comment on one (github.continue):
	// where its commits go and how its conversation was found; nil otherwise.
	pr *prSession
	// prNumber is the pull request this run opened or updated (0: none).
	prNumber int
	// pushedBranch and pushedCommit are what the push of the pull request
	// pushed ("" before it).
	pushedBranch, pushedCommit string
}

// agentState is the agent session's outcome and the checks'.
type agentState struct {
	session    *runner.Session
	result     runner.Result
	ranAgent   bool
	checksErr  error         // non-nil when checks still fail at the end
	lastChecks []checkResult // the last attempt's results
}

// finalState is what the final stages made: the patch's files,
// run.finished and the delivery.
type finalState struct {
	// patch stage: the whole change, and a continued run's own (run.patch)
	files    []snapshot.FileChange
	runFiles []snapshot.FileChange
	// ignored names the files in ignored paths written during the run
	// (nil when none): in the final patch event and run.finished
	ignored *event.IgnoredWritten

	// outputs stage: the run.finished record, once result.json is written
	finished *event.RunFinished
	// delivery stages (GitHub Actions): what was made, what failed
	commentURL, prURL string
	failures          []deliveryFailure
	// review stage: the review posted (nil: none), and the findings for
	// the step summary when it could not be
	review        *event.PublishedReview
	reviewSummary string
}
