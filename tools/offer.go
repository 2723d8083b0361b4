package tools

import "github.com/seed43ef5acb/runner/tools/permission"

// Permissioner is implemented by the built-in tools: Permission names the
// permission every call of the tool needs, whatever its input (read for
// read, glob, grep and list; edit for write and edit; bash for bash).
type Permissioner interface {
	Permission() string
}

// Offered returns the tools of ts that are worth offering to the model
// under rs, in their order: a Permissioner whose permission has no allow
// rule at all in rs is left out, since every call of it would be denied
// (and count toward limits.max_denials), as MCP tools without an allow
// rule are never offered. Tools that are not Permissioners are kept. The
// tools of a spec that allows every permission are ts itself, so their
// definitions stay byte-stable.
func Offered(ts []Tool, rs permission.Ruleset) []Tool {
	out := make([]Tool, 0, len(ts))
	for _, t := range ts {
		if p, ok := t.(Permissioner); ok && !rs.HasAllow(p.Permission()) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Permission is the permission of every read call.
func (t *readTool) Permission() string { return permission.Read }

// Permission is the permission of every glob call.
func (t *globTool) Permission() string { return permission.Read }

// Permission is the permission of every grep call.
func (t *grepTool) Permission() string { return permission.Read }

// Permission is the permission of every list call.
func (t *listTool) Permission() string { return permission.Read }

// Permission is the permission of every edit call.
func (t *editTool) Permission() string { return permission.Edit }

// Permission is the permission of every write call.
func (t *writeTool) Permission() string { return permission.Edit }

// Permission is the permission of every bash call.
func (t *bashTool) Permission() string { return permission.Bash }
