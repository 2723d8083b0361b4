package event

// Gate names a post-run gate (gate.failed "gate").
type Gate string

// Post-run gates: they run after the final patch, before anything is
// written as a result or published.
const (
	// GateEditRules: a changed file is in a path the edit rules deny
	// (written by an allowed command, not by the edit tools).
	GateEditRules Gate = "edit_rules"
	// GateGitTripwire: .git/config, .git/hooks, .git/info/attributes,
	// .gitattributes or .gitmodules changed during the run (the runner put
	// .git's files back as they were).
	GateGitTripwire Gate = "git_tripwire"
	// GateRunnerState: a command changed the runner's own state directory
	// (.runner: earlier runs' out dirs) where no sandbox layer makes it
	// read-only (Landlock only, mode off); the runner put it back.
	GateRunnerState Gate = "runner_state"
	// GateSecret: the patch holds a secret: a secret-looking environment
	// value or a token shape (the patch file is written redacted).
	GateSecret Gate = "secret"
	// GateSubmodule: a file inside a submodule changed; the patch cannot
	// carry it.
	GateSubmodule Gate = "submodule"
	// GateTaskSpec: the task spec file the run runs under, in the work
	// tree, changed during the run (it would loosen the next run); the
	// runner put it back.
	GateTaskSpec Gate = "task_spec"
)

// GateFailed is a post-run gate that stopped the run: its status becomes
// violation (exit 1) and nothing is published. Paths are work-tree-relative
// slash paths; Message says what happened and what to do.
type GateFailed struct {
	Gate    Gate     `json:"gate"`
	Paths   []string `json:"paths"`
	Message string   `json:"message"`
}

// EventType is "gate.failed".
func (GateFailed) EventType() string { return "gate.failed" }
