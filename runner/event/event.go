// Package event defines the JSONL event log (schema v1), its writers (the
// JSONL file, the console view) and secret redaction.
//
// Every line has the envelope fields v, seq, time, run_id and type, followed
// by the fields of one payload type below. The schema is published as JSON
// Schema in schema/events.schema.json (a copy of events.schema.json in this
// package, embedded for Validator); it is the contract for `runner report`,
// the PR comment, batch results and every outside consumer.
//
// Writing a run: Redacting(Multi(jsonl, console), redactor) in front of a
// Writer (NewWriter or Create) and a Console. Reading one back: ReadLog.
//
// Imports: jsonschema, the standard library, internal/workflowcmd and secret;
// nothing of this module above tools (it may use the tools packages below
// it).
package event

import (
	"encoding/json"
	"time"
)

// Version is the schema version written in every line's "v".
const Version = 1

// Payload is the type-specific part of an event.
type Payload interface {
	// EventType is the value of the line's "type" field.
	EventType() string
}

// Sink receives events. Emit may be called from several goroutines; the
// sink assigns seq and time. An error means the record could not be
// written; emitters report it once and go on (the run must not stop because
// a console write failed).
type Sink interface {
	Emit(p Payload) error
}

// Tokens are the token counts of a step or a run. Input counts all prompt
// tokens including cached ones; CacheRead is the part served from cache;
// Output includes Reasoning.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
}

// Add returns the field-by-field sum of t and u, as when a run's totals are
// summed from its steps.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{
		Input:      t.Input + u.Input,
		Output:     t.Output + u.Output,
		Reasoning:  t.Reasoning + u.Reasoning,
		CacheRead:  t.CacheRead + u.CacheRead,
		CacheWrite: t.CacheWrite + u.CacheWrite,
	}
}

// Limits are the run's limits as resolved (0 or "" means none).
type Limits struct {
	MaxSteps    int     `json:"max_steps,omitempty"`
	MaxCostUSD  float64 `json:"max_cost_usd,omitempty"`
	MaxTokens   int64   `json:"max_tokens,omitempty"`
	Timeout     string  `json:"timeout,omitempty"`
	ToolTimeout string  `json:"tool_timeout,omitempty"`
	MaxDenials  int     `json:"max_denials,omitempty"`
	// BinaryPatchBytes is the largest side, in bytes, of a binary change
	// the patch carries (limits.binary_patch_bytes, else the default).
	BinaryPatchBytes int64 `json:"binary_patch_bytes,omitempty"`
	// StreamIdleTimeout is how long a model stream may send nothing before
	// the call is retried (the provider's idle timeout).
	StreamIdleTimeout string `json:"stream_idle_timeout,omitempty"`
	// Total is the spec's limits.total (a budget for the whole
	// conversation of runs continuing each other) with what the earlier
	// runs spent; absent when the spec sets none.
	Total *TotalLimits `json:"total,omitempty"`
}

// TotalLimits are a conversation's limits (zero: none) and what its
// earlier runs spent before this one.
type TotalLimits struct {
	MaxSteps   int     `json:"max_steps,omitempty"`
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
	MaxTokens  int64   `json:"max_tokens,omitempty"`
	Spent      Spent   `json:"spent"`
}

// Spent is what the earlier runs of a conversation used: Tokens are input
// plus output, CostUSD is nil when a run's cost is unknown.
type Spent struct {
	Runs    int      `json:"runs"`
	Steps   int      `json:"steps"`
	Tokens  int64    `json:"tokens"`
	CostUSD *float64 `json:"cost_usd"`
}

// RunStarted opens the log.
type RunStarted struct {
	Task       string `json:"task"`
	SpecPath   string `json:"spec_path"`
	SpecSHA256 string `json:"spec_sha256"`
	Repo       string `json:"repo"`
	BaseTree   string `json:"base_tree"`
	Model      string `json:"model"`
	BaseURL    string `json:"base_url"`
	// Wire is the API spoken: "chat", "responses" or "anthropic".
	Wire string `json:"wire,omitempty"`
	// RepoInstructions names the work tree's file added to the system
	// prompt: "AGENTS.md" or "CLAUDE.md"; "" when none was.
	RepoInstructions string `json:"repo_instructions,omitempty"`
	// ReasoningEffort is the spec's reasoning_effort ("" when not set).
	ReasoningEffort string            `json:"reasoning_effort,omitempty"`
	RunnerVersion   string            `json:"runner_version"`
	Inputs          map[string]string `json:"inputs"`
	Limits          Limits            `json:"limits"`
	// Sandbox is the OS sandbox of bash and the checks (absent in logs
	// written before it existed).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Continues names the run this one continues (runner exec --continue);
	// nil for a fresh run.
	Continues *Continued `json:"continues,omitempty"`
	// MCP lists the task's MCP servers as started, by name (absent without
	// servers).
	MCP []MCPServer `json:"mcp,omitempty"`
	// PullRequest says, for a run on a comment on a pull request of a task
	// with github.continue, which pull request and whether its earlier
	// conversation was found (absent otherwise).
	PullRequest *PRSession `json:"pull_request,omitempty"`
}

// PRSession is a run's pull request (github.continue): its number and
// head branch, whether the run continues the conversation the runner
// left there and, when it starts fresh, why.
type PRSession struct {
	Number    int    `json:"number"`
	Branch    string `json:"branch"`
	Continued bool   `json:"continued"`
	Fresh     string `json:"fresh,omitempty"`
	// History names the artifact the history came from.
	History string `json:"history,omitempty"`
}

// MCPServer records one MCP server of a run: how it was reached, the holes
// its sandbox opened (stdio only) and how many of its tools were offered.
type MCPServer struct {
	Name         string   `json:"name"`
	Transport    string   `json:"transport"` // "stdio" or "http"
	Command      []string `json:"command,omitempty"`
	URL          string   `json:"url,omitempty"`
	Writable     []string `json:"writable,omitempty"`
	Network      bool     `json:"network,omitempty"`
	ToolsListed  int      `json:"tools_listed"`
	ToolsOffered int      `json:"tools_offered"`
}

// Sandbox records how commands were contained: the spec's mode (auto,
// required, off), the layers in use ("namespaces", "landlock"; empty with
// mode off, or when auto found none and bash was refused), and the holes
// the spec opened.
type Sandbox struct {
	Mode     string   `json:"mode"`
	Layers   []string `json:"layers"`
	Writable []string `json:"writable,omitempty"`
	Network  bool     `json:"network,omitempty"`
	// NetworkAllow is sandbox.network.allow: the hosts commands reach
	// through the runner's proxy.
	NetworkAllow []string `json:"network_allow,omitempty"`
	// LandlockABI is the kernel's Landlock ABI when the landlock layer is
	// used (0 otherwise).
	LandlockABI int `json:"landlock_abi,omitempty"`
	// Limits are what the sandbox does not stop here (sandbox.Limits).
	Limits []string `json:"limits,omitempty"`
	// HostSetup is what the machine's set-up did for the sandbox, one
	// line (the GitHub Action: the AppArmor profile giving the runner user
	// namespaces, loaded or why not); "" when nothing said.
	HostSetup string `json:"host_setup,omitempty"`
}

// Continued names an earlier run whose conversation a run continues: its
// run id and out dir (as given to --continue), and the base tree of the
// whole chain, which the continued run's changes.patch is taken against.
type Continued struct {
	RunID  string `json:"run_id"`
	Dir    string `json:"dir"`
	Steps  int    `json:"steps"`
	Forced bool   `json:"forced,omitempty"`
}

// StepStarted marks the start of a model step (1-based).
type StepStarted struct {
	Step int `json:"step"`
}

// Text is a whole text part of an assistant turn.
type Text struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

// Reasoning is a whole reasoning part of an assistant turn.
type Reasoning struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

// MCPTool names the MCP server a tool comes from and the tool's name on
// that server; the event's tool is the name the model sees
// (mcp__SERVER__TOOL).
type MCPTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// ToolStarted marks a tool call about to run (after its arguments completed).
type ToolStarted struct {
	Step       int             `json:"step"`
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	MCP        *MCPTool        `json:"mcp,omitempty"`
	ToolAsSent string          `json:"tool_as_sent,omitempty"`
	Input      json.RawMessage `json:"input"` // null when the arguments were invalid
	InputRaw   string          `json:"input_raw,omitempty"`
}

// ToolCompleted is a tool call that ran to a result.
type ToolCompleted struct {
	Step       int            `json:"step"`
	CallID     string         `json:"call_id"`
	Tool       string         `json:"tool"`
	MCP        *MCPTool       `json:"mcp,omitempty"`
	Output     string         `json:"output"`
	Truncated  bool           `json:"truncated"`
	DurationMS int64          `json:"duration_ms"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// ToolFailed is a tool call that ended in error (denied, invalid arguments,
// unknown tool, the tool's own error, aborted).
type ToolFailed struct {
	Step       int      `json:"step"`
	CallID     string   `json:"call_id"`
	Tool       string   `json:"tool"`
	MCP        *MCPTool `json:"mcp,omitempty"`
	Error      string   `json:"error"`
	Denied     bool     `json:"denied"`
	DurationMS int64    `json:"duration_ms"`
}

// PermissionDenied records a refused permission and the rule that decided
// (Rule nil: no rule did; then Protection names the built-in protection
// that denied the path, ".env", ".git" or ".runner", and "" is the default
// deny; DecidedBy says which in words).
type PermissionDenied struct {
	Step       int      `json:"step"`
	CallID     string   `json:"call_id"`
	Tool       string   `json:"tool"`
	MCP        *MCPTool `json:"mcp,omitempty"`
	Permission string   `json:"permission"`
	Pattern    string   `json:"pattern"`
	Rule       *string  `json:"rule"`
	Protection string   `json:"protection,omitempty"`
	Reason     string   `json:"reason"`
}

// DecidedBy names what refused the call, where a summary names the rule:
// the rule, "built-in .env protection" (tools/permission's
// ProtectionText), or "default deny".
func (v PermissionDenied) DecidedBy() string {
	switch {
	case v.Rule != nil:
		return *v.Rule
	case v.Protection != "":
		return "built-in " + v.Protection + " protection"
	}
	return "default deny"
}

// Retry records a retried model call.
type Retry struct {
	Step       int        `json:"step"`
	Attempt    int        `json:"attempt"`
	ErrorClass ErrorClass `json:"error_class"`
	Error      string     `json:"error"`
	DelayMS    int64      `json:"delay_ms"`
	// MaxAttempts is the most retries this failure gets: the backoff's
	// attempts, or 1 for an endpoint that cannot be reached (0: unknown).
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// Compaction records a summarised history.
type Compaction struct {
	Step         int    `json:"step"`
	Reason       string `json:"reason"`
	TokensBefore int64  `json:"tokens_before"`
}

// StepFinished closes a model step. CostUSD is nil when the price is unknown.
type StepFinished struct {
	Step         int    `json:"step"`
	FinishReason string `json:"finish_reason"`
	Tokens       Tokens `json:"tokens"`
	// TokensUnknown: the provider reported no usage for the step, so Tokens
	// are 0 but not measured (and CostUSD is nil).
	TokensUnknown bool `json:"tokens_unknown,omitempty"`
	// Model is the model the provider named in its reply (often a dated
	// snapshot of the one asked for); "" when it named none.
	Model      string   `json:"model,omitempty"`
	CostUSD    *float64 `json:"cost_usd"`
	DurationMS int64    `json:"duration_ms"`
}

// FileChange is one file in a patch.
type FileChange struct {
	Path      string       `json:"path"`
	OldPath   string       `json:"old_path,omitempty"`
	Status    ChangeStatus `json:"status"`
	Additions int          `json:"additions"`
	Deletions int          `json:"deletions"`
	Binary    bool         `json:"binary"`
	// Omitted is set when the patch leaves this file's content change out
	// (a binary side larger than the binary patch limit): the patch then
	// does not carry it, and the run is not a success.
	Omitted *Omitted `json:"omitted,omitempty"`
}

// Omitted records a binary change the patch does not carry: why, and the
// git blob ids and sizes (bytes) of both sides, so the change can still be
// identified and checked (`git hash-object FILE`). A side that does not
// exist (an added or deleted file) has no blob and size 0.
type Omitted struct {
	Reason  string `json:"reason"`
	OldBlob string `json:"old_blob,omitempty"`
	OldSize int64  `json:"old_size"`
	NewBlob string `json:"new_blob,omitempty"`
	NewSize int64  `json:"new_size"`
}

// Patch records the changes from the base tree (Step nil: the final patch).
type Patch struct {
	Step      *int         `json:"step"`
	Tree      string       `json:"tree"`
	Files     []FileChange `json:"files"`
	Additions int          `json:"additions"`
	Deletions int          `json:"deletions"`
	// Tracking says how the snapshot found the changes: "paths" (the paths
	// the step's tools reported), "watch" (what inotify reported while the
	// step's commands ran) or "full (reason)" (a walk of the whole tree,
	// e.g. "full (inotify queue overflow)"). Empty in older logs.
	Tracking string `json:"tracking,omitempty"`
	// IgnoredWritten (the final patch only) names the files in paths git
	// ignores that were created or changed during the run; nil when none
	// were (or in older logs).
	IgnoredWritten *IgnoredWritten `json:"ignored_written,omitempty"`
}

// IgnoredWritten names the files of the work tree in paths git ignores
// (node_modules/, .venv/, build/, an ignored local.cfg) that were created
// or changed during the run, by a command, a check, an MCP server or
// anything else writing there: no patch holds them, yet they stay in the
// work tree (a payload in node_modules/.bin runs at the next npm test
// outside the sandbox). Paths are work-tree-relative slash paths in walk
// order, the first MaxIgnoredListed: files and symlinks, and ignored
// directories (ending in "/") that changed with no file listed below them
// (moved in, or a file in them deleted); Total counts them all. Isolated says the
// work tree was the --isolate copy, removed at the end of the run with
// these files. Error says why the work tree could not be searched (Paths
// and Total are then empty).
type IgnoredWritten struct {
	Paths    []string `json:"paths"`
	Total    int      `json:"total"`
	Isolated bool     `json:"isolated,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// MaxIgnoredListed bounds IgnoredWritten.Paths (Total counts every file):
// a build that writes 100,000 files into node_modules cannot grow the
// record without bound.
const MaxIgnoredListed = 100

// CheckStarted marks a check command about to run.
type CheckStarted struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Attempt int    `json:"attempt"`
}

// CheckFinished is a check command's outcome.
type CheckFinished struct {
	Name       string `json:"name"`
	Command    string `json:"command"`
	Attempt    int    `json:"attempt"`
	ExitCode   int    `json:"exit_code"`
	Passed     bool   `json:"passed"`
	Output     string `json:"output"`
	DurationMS int64  `json:"duration_ms"`
	// SandboxRefresh is what the sandbox changed before the check ran
	// (protected files that appeared got covers); nil when nothing.
	SandboxRefresh *SandboxRefresh `json:"sandbox_refresh,omitempty"`
	// Hint says, for a failed check that ran in the sandbox, what the
	// sandbox takes away that a check may need (the network, the real
	// $HOME, writes outside the work tree) and which spec key gives it
	// back; "" for a check that passed or ran unsandboxed.
	Hint string `json:"hint,omitempty"`
	// Cancelled: the run was stopped (a signal, its timeout) while the
	// check ran, which was killed; it neither passed nor failed, and its
	// exit code is -1.
	Cancelled bool `json:"cancelled,omitempty"`
}

// SandboxRefresh is what the sandbox changed before a command: the paths
// newly hidden (work-tree-relative inside the work tree) and why. The
// bash tool's tool.completed carries the same as metadata
// sandbox_refresh.
type SandboxRefresh struct {
	Hidden []string `json:"hidden,omitempty"`
	Reason string   `json:"reason"`
}

// RunError is the error of a run that did not succeed.
type RunError struct {
	Class   ErrorClass `json:"class"`
	Message string     `json:"message"`
}

// RunFinished closes the log; it is always the last line.
type RunFinished struct {
	Status           Status          `json:"status"`
	ExitCode         int             `json:"exit_code"`
	FinalMessage     string          `json:"final_message"`
	StructuredOutput json.RawMessage `json:"structured_output"`
	Steps            int             `json:"steps"`
	Tokens           Tokens          `json:"tokens"`
	CostUSD          *float64        `json:"cost_usd"`
	DurationMS       int64           `json:"duration_ms"`
	PatchPath        string          `json:"patch_path"`
	FilesChanged     int             `json:"files_changed"`
	// Denials counts the calls the permissions refused during the run;
	// DeniedCalls lists them as their permission.denied events said (step,
	// tool, permission, the pattern judged, the rule that decided, the
	// reason), the first MaxDeniedCalls of them, so that a final message
	// claiming what a denied call would have done never stands alone.
	Denials     int                `json:"denials"`
	DeniedCalls []PermissionDenied `json:"denied_calls"`
	// Network are the allow-list proxy's decisions, one per host:port,
	// as the network.access events said (nil without
	// sandbox.network.allow).
	Network []NetworkAccess `json:"network,omitempty"`
	// Review is the pull request review review mode posted; nil when none
	// was (not asked, or the call failed: see the publish events).
	Review *PublishedReview `json:"review,omitempty"`
	// PRURL is the pull request the run opened or updated under GitHub
	// Actions; CommentURL its sticky comment; "" when none.
	PRURL      string `json:"pr_url,omitempty"`
	CommentURL string `json:"comment_url,omitempty"`
	// History is the digest of the run's history.jsonl as the runner
	// wrote it (nil when the run kept none: it ended before the agent);
	// --continue refuses a history that does not match it.
	History *HistoryDigest `json:"history,omitempty"`
	// IgnoredWritten is the final patch event's: files in paths git
	// ignores created or changed during the run (nil when none).
	IgnoredWritten *IgnoredWritten `json:"ignored_written,omitempty"`
	Error          *RunError       `json:"error,omitempty"`
}

// HistoryDigest identifies a history.jsonl: the SHA-256 (lower-case hex)
// and the size in bytes of every byte the runner wrote to it.
type HistoryDigest struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// MaxDeniedCalls bounds RunFinished.DeniedCalls (Denials still counts
// every denial): a spec with a high max_denials cannot grow the record
// without bound.
const MaxDeniedCalls = 100

// EventType is "run.started".
func (RunStarted) EventType() string { return "run.started" }

// EventType is "step.started".
func (StepStarted) EventType() string { return "step.started" }

// EventType is "text".
func (Text) EventType() string { return "text" }

// EventType is "reasoning".
func (Reasoning) EventType() string { return "reasoning" }

// EventType is "tool.started".
func (ToolStarted) EventType() string { return "tool.started" }

// EventType is "tool.completed".
func (ToolCompleted) EventType() string { return "tool.completed" }

// EventType is "tool.failed".
func (ToolFailed) EventType() string { return "tool.failed" }

// EventType is "permission.denied".
func (PermissionDenied) EventType() string { return "permission.denied" }

// EventType is "retry".
func (Retry) EventType() string { return "retry" }

// EventType is "compaction".
func (Compaction) EventType() string { return "compaction" }

// EventType is "step.finished".
func (StepFinished) EventType() string { return "step.finished" }

// EventType is "patch".
func (Patch) EventType() string { return "patch" }

// EventType is "check.started".
func (CheckStarted) EventType() string { return "check.started" }

// EventType is "check.finished".
func (CheckFinished) EventType() string { return "check.finished" }

// EventType is "run.finished".
func (RunFinished) EventType() string { return "run.finished" }

// Envelope is the common part of every line.
type Envelope struct {
	V     int       `json:"v"`
	Seq   int64     `json:"seq"`
	Time  time.Time `json:"time"`
	RunID string    `json:"run_id"`
	Type  string    `json:"type"`
}
