package pipeline

import (
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// noToolMessage is the warning for a spec whose permissions offer no tool.
const noToolMessage = "the permissions give the agent no tool: read, edit and bash have no allow rule, " +
	"so every tool call fails and the agent can only answer in words; " +
	"allow what the task needs, e.g. permissions: {read: allow, edit: allow} (see docs/permissions.md)"

// NoToolSpec is the warning for a task spec whose permissions allow no
// tool, at its permissions key; nil when some tool is allowed or the
// permissions are invalid (CheckSpec reports those).
func NoToolSpec(task *spec.Spec) *spec.Error {
	rules, err := task.Ruleset()
	if err != nil || offersTool(task, rules) {
		return nil
	}
	p, ok := task.Position("permissions")
	if !ok {
		p = spec.Pos{Line: 1, Col: 1}
	}
	return &spec.Error{File: task.Path, Line: p.Line, Col: p.Col, Msg: noToolMessage}
}

// offersTool reports whether rules allow a built-in tool, or an MCP tool
// of a declared server.
func offersTool(task *spec.Spec, rules permission.Ruleset) bool {
	for _, p := range []string{permission.Read, permission.Edit, permission.Bash} {
		if rules.HasAllow(p) {
			return true
		}
	}
	return len(task.MCP.Servers) > 0 && rules.HasAllow(permission.MCP)
}
