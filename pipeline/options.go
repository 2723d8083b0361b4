package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/seed43ef5acb/runner/internal/telemetry"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
)

// ExecOptions configure one `runner exec` run: one field per command-line
// flag, plus what cmd reads from the process (environment, streams, API key).
// Zero values mean "not given".
type ExecOptions struct {
	// Task is the path of the task spec (the TASK.yaml argument).
	Task string
	// TaskData is the task spec itself when it is not read from Task
	// (exec -: stdin); Task then only names it, as "<stdin>".
	TaskData []byte
	// Repo is the work tree (--repo, default ".").
	Repo string
	// Model overrides the spec's model (--model, env RUNNER_MODEL).
	Model string
	// BaseURL is the OpenAI-compatible endpoint (--base-url, env OPENAI_BASE_URL).
	BaseURL string
	// Wire names the API spoken (--wire): "chat", "responses" or
	// "anthropic"; "" takes the spec's provider.wire or chooses.
	Wire string
	// Inputs are the task inputs as given (--set KEY=VALUE, parsed by
	// ParseInputs); the spec's defaults fill in the rest.
	Inputs map[string]string
	// Out is the output directory (--out); "" means .runner/runs/<run id> in
	// the current directory.
	Out string
	// Events is where the JSONL event log goes (--events); "-" is Stdout,
	// "" means Out/events.jsonl.
	Events string
	// Patch is where the patch goes (--patch); "" means Out/changes.patch.
	Patch string
	// MaxSteps overrides limits.max_steps (--max-steps). 0 means "not
	// given" (the spec's limit applies), since the flag's zero value cannot
	// be told apart from an omitted flag; negative is a usage error.
	MaxSteps int
	// Timeout overrides limits.timeout (--timeout). 0 means "not given"
	// (the spec's limit applies); negative is a usage error.
	Timeout time.Duration
	// MaxCostUSD caps limits.max_cost_usd, in USD: the run's budget is the
	// lower of the two (this one when the spec has none). 0 means no cap;
	// negative is a usage error. Batch gives each repository its share.
	MaxCostUSD float64
	// LimitsFrom names the file Timeout and MaxCostUSD were set in when
	// not on the command line: batch passes its spec file, and messages
	// then say "limits.timeout in batch.yaml" instead of "--timeout".
	// "" = the command line.
	LimitsFrom string
	// Backoff shapes the retries of retryable model errors within the run;
	// zero fields take runner's defaults (DefaultBackoffBase, …).
	Backoff runner.Backoff
	// SnapshotDir is where the snapshot store goes ("": the user's cache,
	// <cache>/runner/snapshots/<hash of the work tree path>; with Isolate,
	// the run's temporary directory). Batch gives each work tree one beside
	// it, removed with it.
	SnapshotDir string
	// Hidden are more files and directories (absolute) the sandbox hides
	// from every command, beside the built-in ones: a batch's clone cache
	// entries and the other repositories' work trees, which hold their
	// committed files, a protected .env among them.
	Hidden []string
	// Isolate works on a temporary copy of Repo and leaves it untouched (--isolate).
	Isolate bool
	// Record writes the model session to this cassette file (--record).
	Record string
	// Replay answers model calls from this cassette file, offline (--replay).
	Replay string
	// Quiet turns off progress on Stderr (--quiet).
	Quiet bool
	// Color is --color: auto ("") lets the environment and the terminal
	// decide (event.UseColor).
	Color event.ColorMode
	// Continue is the out dir of an earlier run whose conversation this run
	// continues (--continue); "" starts fresh.
	Continue string
	// Prompt replaces the spec's rendered prompt as the run's user message
	// (--prompt, --prompt-file); "" keeps the spec's.
	Prompt string
	// Force continues even when the spec changed, the work tree diverged
	// from the earlier run's last snapshot, or its base tree is gone
	// (--force); each override is recorded in run.started.
	Force bool
	// PR is the pull request the run is about under GitHub Actions (--pr,
	// env RUNNER_PR): review mode reviews it, the sticky comment goes on
	// it, {{ .GitHub.Number }} and the head fields name it. 0 keeps the
	// event's; outside Actions it is a usage error.
	PR int

	// Telemetry exports the run's spans and metrics (nil: none) and tags
	// the model requests with traceparent; the requests carry User-Agent
	// runner/<version> either way.
	Telemetry *telemetry.Telemetry
	// Logger receives the runner's diagnostics (nil: discarded).
	Logger *slog.Logger

	// APIKey is the provider key, from env OPENAI_API_KEY only (never a flag).
	APIKey string
	// Environ is the process environment ("KEY=VALUE"), read in cmd.
	Environ []string
	// Stdout carries data (events with --events -, the final message).
	Stdout io.Writer
	// Stderr carries progress and messages.
	Stderr io.Writer

	// copyHook, when set, is called in the --isolate copy between listing
	// each regular file and opening it (tests make files vanish there).
	copyHook func(rel string)
	// resolveHost, when set, resolves host names for the network allow
	// list's proxy (tests resolve names to 127.0.0.1).
	resolveHost func(ctx context.Context, host string) ([]netip.Addr, error)
	// loopbackNames lets an allowed name resolve to loopback (tests whose
	// upstream listens on 127.0.0.1: netproxy.Options.LoopbackNames).
	loopbackNames bool
	// baseHook, when set, is called in the base snapshot's goroutine
	// before the walk (tests hold the walk there).
	baseHook func()
	// serialBase makes the snapshot stage wait for the base tree, as
	// before the overlap (benchmarks compare the two).
	serialBase bool
}

// Validate checks the options that do not depend on the spec; errors wrap
// ErrUsage.
func (o ExecOptions) Validate() error {
	switch {
	case o.Task == "":
		return fmt.Errorf("%w: a task spec file is required", ErrUsage)
	case o.MaxSteps < 0:
		return fmt.Errorf("%w: --max-steps %d: give a positive step count (0 keeps the spec's limits.max_steps)",
			ErrUsage, o.MaxSteps)
	case o.Timeout < 0:
		return fmt.Errorf("%w: --timeout %s: give a positive duration such as 20m (0 keeps the spec's limits.timeout)",
			ErrUsage, o.Timeout)
	case o.MaxCostUSD < 0:
		return fmt.Errorf("%w: max cost %v: give a positive budget in USD (0 keeps the spec's limits.max_cost_usd)",
			ErrUsage, o.MaxCostUSD)
	case o.PR < 0:
		return fmt.Errorf("%w: --pr %d: give a pull request number", ErrUsage, o.PR)
	case o.Continue != "" && o.Out != "" && sameDir(o.Out, o.Continue):
		return fmt.Errorf("%w: --out %s is the run --continue reads: this run would overwrite its outputs; "+
			"give this run another --out (or none: .runner/runs/<run id>/)", ErrUsage, o.Out)
	case o.Force && o.Continue == "":
		return fmt.Errorf("%w: --force only applies to --continue", ErrUsage)
	case o.Record != "" && o.Replay != "":
		return fmt.Errorf("%w: --record and --replay cannot be used together", ErrUsage)
	}
	return nil
}
