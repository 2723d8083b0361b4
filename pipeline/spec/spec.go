package spec

import (
	"time"

	"github.com/seed43ef5acb/runner/llm"
)

// Version is the only task spec version this runner reads.
const Version = 1

// Spec is a task spec (v1), as loaded and validated by Load. The YAML keys
// are the snake_case names in the field comments; schema/task.schema.json
// documents them for editors.
type Spec struct {
	// Path is the file the spec was loaded from (as given to Load).
	Path string
	// Version is the spec version (key "version"); always Version.
	Version int
	// Name identifies the task in events, comments and branches ("name",
	// required): letters, digits, '.', '_' and '-'.
	Name string
	// Description says what the task does ("description").
	Description string
	// Model is the default model ("model"); --model and RUNNER_MODEL override it.
	Model string
	// ReasoningEffort asks the model to think less or more
	// ("reasoning_effort"): one of llm.ReasoningEfforts(), "" to send none.
	// Each wire names it its own way; see docs/providers.md.
	ReasoningEffort string
	// Instructions are added to the system prompt ("instructions").
	Instructions string
	// RepoInstructions is false when the work tree's AGENTS.md (else
	// CLAUDE.md) stays out of the system prompt ("repo_instructions",
	// default true); nil when the key is absent.
	RepoInstructions *bool
	// Prompt is the user message, a Go text/template over .Inputs, .Event and
	// .GitHub ("prompt", required). See Render.
	Prompt string
	// Inputs are the declared template inputs by name ("inputs").
	Inputs map[string]Input
	// Permissions maps a permission name to either an action string ("allow"
	// or "deny": a rule for every pattern) or a map[string]any of pattern →
	// action string ("permissions"). Everything not allowed is denied. See
	// Ruleset.
	Permissions map[string]any
	// Limits bound the agent run ("limits").
	Limits Limits
	// Checks run after the agent stops ("checks").
	Checks []Check
	// Retries is how many times failing checks are fed back to the agent
	// ("retries").
	Retries int
	// Output asks for structured output ("output").
	Output Output
	// GitHub says what to publish on GitHub ("github").
	GitHub GitHub
	// Models overrides or adds model catalog entries by model name ("models").
	Models map[string]ModelOverride
	// Env lists environment variable names passed to tools explicitly, even
	// when their names look secret ("env").
	Env []string
	// MCP declares Model Context Protocol servers ("mcp"); see MCP.
	MCP MCP
	// Sandbox contains the commands bash and the checks run ("sandbox").
	Sandbox Sandbox
	// Provider adapts requests to the model provider ("provider"); see
	// provider.go.
	Provider Provider

	pos map[string]Pos // where keys are, by dotted path ("prompt", "github.pull_request.title")
}

// Input is a declared template input.
type Input struct {
	// Description says what the input is for ("description").
	Description string
	// Required inputs must be given with --set ("required").
	Required bool
	// Default is used when the input is not given ("default"); nil: none.
	Default *string
	// Enum, when not empty, lists the allowed values ("enum").
	Enum []string

	pos Pos // where the input is declared
}

// Limits bound an agent run; a zero value means no limit.
type Limits struct {
	MaxSteps    int           // "max_steps": model steps; the last one must finish
	MaxCostUSD  float64       // "max_cost_usd": estimated cost in US dollars
	MaxTokens   int64         // "max_tokens": input + output tokens over the run
	Timeout     time.Duration // "timeout": wall clock for the whole run, e.g. "20m"
	ToolTimeout time.Duration // "tool_timeout": default per tool call, e.g. "2m"
	MaxDenials  int           // "max_denials": permission denials before the run stops
	// BinaryPatchBytes is "binary_patch_bytes": the largest side, in
	// bytes, of a binary change the patch carries (0: the default,
	// snapshot.DefaultMaxBinaryPatch); see limits_patch.go.
	BinaryPatchBytes int64
	// Total bounds a whole conversation: this run and every run it
	// continues (runner exec --continue, a comment on a pull request).
	Total TotalLimits // "total"
}

// Check is a command run in the work tree after the agent stops.
type Check struct {
	Name    string        // "name", required, unique
	Run     string        // "run", required: a shell command
	Timeout time.Duration // "timeout": zero means the run's default
}

// Output asks for structured output.
type Output struct {
	// Schema is a JSON Schema (a JSON object, decoded with encoding/json
	// types: map[string]any, []any, string, float64, bool, nil) that the
	// final answer must satisfy ("schema"); nil when the task has none.
	Schema map[string]any
}

// GitHub says what to publish on GitHub when the run is in GitHub Actions.
type GitHub struct {
	// Comment posts and updates a sticky PR or issue comment ("comment").
	Comment bool
	// Continue makes a triggering comment on a pull request the runner
	// opened for the task continue that run's conversation, its commits
	// pushed on the pull request's branch ("continue"); on another pull
	// request the run starts fresh from its head. See
	// pipeline/stage_pr_session.go.
	Continue bool
	// PullRequest opens or updates a pull request with the patch
	// ("pull_request"); nil when not asked.
	PullRequest *PullRequest
	// Review posts the structured output's findings as one pull request
	// review ("review", see review.go); nil when not asked.
	Review *Review
}

// PullRequest describes the pull request to open. Branch, Title and Body are
// templates like Prompt.
type PullRequest struct {
	Branch string   // "branch", required
	Title  string   // "title", required
	Body   string   // "body"
	Draft  bool     // "draft"
	Labels []string // "labels"
}

// ModelOverride overrides or adds a model catalog entry. Nil or zero fields
// keep the catalog's value; prices are USD per million tokens.
type ModelOverride struct {
	ContextWindow    int        // "context_window": tokens
	MaxOutput        int        // "max_output": tokens
	InputPrice       *float64   // "input_price_per_million": USD per million input tokens
	CachedInputPrice *float64   // "cached_input_price_per_million": USD per million cached input tokens
	OutputPrice      *float64   // "output_price_per_million": USD per million output tokens
	Wires            []llm.Wire // "wires": the wires the model calls tools on, the one to choose first
}

// Pos is a position in a spec file; Line and Col are 1-based.
type Pos struct {
	Line int
	Col  int
}

// Position returns where the value at a dotted key path is in the spec
// file: "prompt", "limits.timeout", "checks[0].run", "inputs.package" (the
// input's name), "github.pull_request.title". ok is false for a key the
// file does not have.
func (s *Spec) Position(path string) (p Pos, ok bool) {
	p, ok = s.pos[path]
	return p, ok
}

// ReadsRepoInstructions reports whether the work tree's AGENTS.md (else
// CLAUDE.md) goes into the system prompt: unless repo_instructions is false.
func (s *Spec) ReadsRepoInstructions() bool {
	return s.RepoInstructions == nil || *s.RepoInstructions
}
