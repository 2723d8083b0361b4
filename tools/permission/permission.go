// Package permission decides whether a tool call may run: deny by default,
// allowed only when an allow rule matches and no deny rule matches. It
// holds the rules, their matching (path globs and command wildcards with
// holes), work-tree path resolution and the protection of .git and .env*;
// bash command lines are judged by the subpackage bashcheck, which imports
// this one.
//
// Imports: doublestar and the standard library; nothing of this module.
package permission

// Action is what a rule does when it matches.
type Action string

// Actions. "ask" does not exist headless: nobody is there to answer.
const (
	Allow Action = "allow"
	Deny  Action = "deny"
)

// Permission names.
const (
	Read              = "read"               // read, glob, grep, list
	Edit              = "edit"               // write, edit, output redirections
	Bash              = "bash"               // shell commands
	ExternalDirectory = "external_directory" // any path outside the work tree
	DoomLoop          = "doom_loop"          // the same tool call three times in a row
	DynamicArgs       = "dynamic_args"       // bash commands with arguments only known at run time
	WebFetch          = "webfetch"
	MCP               = "mcp" // a tool of an MCP server; pattern "SERVER/TOOL"
)

// Rule is one entry of a task's permissions block: for Permission, a call
// whose pattern matches Pattern gets Action. A bare action in the spec
// (`read: allow`) is the rule {read, "*", allow}, which matches everything.
type Rule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     Action `json:"action"`
}

// Ruleset is a task's rules; order does not change a decision.
type Ruleset []Rule

// Decision is the verdict on one (permission, pattern) pair, with its
// provenance: Rule is the rule that decided; when none did, Protection
// names the built-in protection that denied the path (".env", ".git" or
// ".runner"; see ProtectionText), and "" with a nil Rule is the default
// deny.
type Decision struct {
	Allowed    bool   `json:"allowed"`
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Rule       *Rule  `json:"rule"`
	Protection string `json:"protection,omitempty"`
	Reason     string `json:"reason"`
}

// ProtectionText names a built-in protection (Decision.Protection) where a
// rule would be named: "built-in .env protection".
func ProtectionText(what string) string { return "built-in " + what + " protection" }
