package runner

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// Model streams one model call as unified events. The session calls it from
// its own goroutine, once per step attempt (and once per compaction). The
// sequence ends after a finish-step event, or after an error event whose Err
// is an *llm.Error with Class retryable, context-overflow or fatal; other
// errors are treated as fatal. The llm provider implements it.
type Model interface {
	Stream(ctx context.Context, req llm.Request) iter.Seq[llm.Event]
}

// Policy decides a permission the runner raises itself: the doom_loop
// permission, with the tool name as pattern. A nil Policy denies.
// permission.Ruleset implements it.
type Policy interface {
	Evaluate(permission, pattern string) permission.Decision
}

// Snapshotter records the work tree after a step whose tools changed files
// and returns the tree and the files changed since the run's base tree. The
// session calls it after each such step, from its own goroutine; touched are
// work-tree-relative slash paths, all says any file may have changed (bash).
// An error is logged and the step goes on without a patch event.
type Snapshotter interface {
	Track(ctx context.Context, touched []string, all bool) (StepSnapshot, error)
}

// StepSnapshot is what a Snapshotter recorded after a step.
type StepSnapshot struct {
	Tree  string             // the git tree hash
	Files []event.FileChange // changed since the run's base tree
	// Tracking says how the changes were found, for the patch event:
	// "paths" (the paths the tools reported), "watch" (inotify) or
	// "full (reason)" (a walk of the whole tree).
	Tracking string
}

// Pricer prices one model call; nil means the price is unknown (never 0).
type Pricer interface {
	Cost(model string, u llm.Usage) *float64
}

// ContextWindower gives a model's context window in tokens, 0 when unknown.
// A Pricer that also implements it is used when Config.Windows is nil.
type ContextWindower interface {
	ContextWindow(model string) int
}

// Limits bound a session; zero values mean "none", except MaxDenials
// (default 5).
type Limits struct {
	MaxSteps    int           // model steps over the whole session
	MaxCostUSD  float64       // checked after each step
	MaxTokens   int64         // input+output tokens, checked after each step
	Timeout     time.Duration // deadline on the whole session (Run and every Continue)
	ToolTimeout time.Duration // per tool call
	MaxDenials  int           // permission denials before status blocked
}

// Backoff shapes retries of retryable model errors: exponential delays from
// Base, doubled each time, with ±Jitter randomisation, each capped at Max
// (a server's Retry-After is honoured up to Max); Attempts bounds the
// retries of one step.
type Backoff struct {
	Base     time.Duration // default 2s
	Max      time.Duration // default 60s
	Attempts int           // default 5
	Jitter   float64       // 0..1, default 0.2; negative means none
}

// Config is everything a session needs. Model and Prompt are required.
type Config struct {
	Model     Model
	ModelName string

	// WorkTree is the directory the agent works in, named in the system
	// prompt; its AGENTS.md (else CLAUDE.md) is read into the prompt.
	WorkTree string
	// NoRepoInstructions leaves the work tree's AGENTS.md and CLAUDE.md out
	// of the system prompt (the spec's repo_instructions: false).
	NoRepoInstructions bool
	// Platform is shown in the system prompt; default GOOS/GOARCH.
	Platform string
	// Instructions are the task's instructions, added to the system prompt.
	Instructions string
	// Prompt is the rendered user message that starts the run.
	Prompt string

	// Tools are offered sorted by name; they are expected to be wrapped by
	// the permission decorator (a refused call returns a Result with Denial).
	Tools  []tools.Tool
	Policy Policy
	Sink   event.Sink
	// Snapshotter is optional: nil means no per-step patch events.
	Snapshotter Snapshotter
	// Pricer is optional: nil means costs are unknown.
	Pricer Pricer
	// Windows is optional: nil means the Pricer if it implements
	// ContextWindower, else windows are unknown (only overflow errors
	// trigger compaction).
	Windows ContextWindower

	// History, when set, receives the wire history as it changes (see
	// History); nil keeps none.
	History History
	// Resume, when set, continues an earlier conversation: its system
	// prompt is used verbatim (so the provider's prompt cache still holds
	// the prefix) and its messages come before Prompt.
	Resume *Transcript

	Limits Limits
	// OutputSchema, when set, is the JSON Schema (an object schema) of the
	// run's structured output, offered as the StructuredOutput tool.
	OutputSchema json.RawMessage

	Backoff Backoff
	// MaxCompactions bounds compactions per session; default 3.
	MaxCompactions int
	// CompactionReserve is the number of tokens kept free below the context
	// window; default a fifth of the window, at most 32,000.
	CompactionReserve int

	Temperature     *float64
	TopP            *float64
	MaxOutputTokens int
	ReasoningEffort string

	// Now is the clock (default time.Now); the date in the system prompt is
	// taken from it once, when the session starts.
	Now func() time.Time
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultMaxDenials     = 5
	DefaultMaxCompactions = 3
	DefaultBackoffBase    = 2 * time.Second
	DefaultBackoffMax     = 60 * time.Second
	DefaultBackoffTries   = 5
	DefaultJitter         = 0.2
	maxReserve            = 32000
	maxStructuredTries    = 3 // the first call and two more
)

// withDefaults fills zero values.
func (c Config) withDefaults() Config {
	if c.Limits.MaxDenials <= 0 {
		c.Limits.MaxDenials = DefaultMaxDenials
	}
	if c.MaxCompactions <= 0 {
		c.MaxCompactions = DefaultMaxCompactions
	}
	if c.Backoff.Base <= 0 {
		c.Backoff.Base = DefaultBackoffBase
	}
	if c.Backoff.Max <= 0 {
		c.Backoff.Max = DefaultBackoffMax
	}
	if c.Backoff.Attempts <= 0 {
		c.Backoff.Attempts = DefaultBackoffTries
	}
	switch {
	case c.Backoff.Jitter == 0:
		c.Backoff.Jitter = DefaultJitter
	case c.Backoff.Jitter < 0:
		c.Backoff.Jitter = 0
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Windows == nil {
		if w, ok := c.Pricer.(ContextWindower); ok {
			c.Windows = w
		}
	}
	return c
}
