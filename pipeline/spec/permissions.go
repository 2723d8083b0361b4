package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// permissionNames are the permission names a spec may use, sorted.
func permissionNames() []string {
	return []string{
		permission.Bash, permission.DoomLoop, permission.DynamicArgs, permission.Edit,
		permission.ExternalDirectory, permission.MCP, permission.Read, permission.WebFetch,
	}
}

// pathPermission reports whether a permission's patterns are path globs.
func pathPermission(name string) bool {
	return name == permission.Read || name == permission.Edit || name == permission.ExternalDirectory
}

// coveredBy names the permission that covers a tool name people may write.
func coveredBy(name string) string {
	switch name {
	case "glob", "grep", "list":
		return permission.Read
	case "write":
		return permission.Edit
	}
	return ""
}

const headlessAskHint = `the runner is headless and nobody can answer: use allow or deny`

// permissions decodes "permissions": name → action, or name → {pattern: action}.
func (d *Decoder) permissions(path string, n *yaml.Node) map[string]any {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.TypeError(path, n, "a mapping of permission names", "")
		return nil
	}
	names := permissionNames()
	out := map[string]any{}
	for key, val := range d.Pairs(path, n) {
		name, p := key.Value, joinPath(path, key.Value)
		if !slices.Contains(names, name) {
			hint := unknownKeyHint(name, names)
			if c := coveredBy(name); c != "" {
				hint = fmt.Sprintf("%s is covered by the %q permission", name, c)
			}
			d.ErrorAt(key, hint, "%s: unknown permission %q", path, name)
			continue
		}
		d.pos[p] = posOf(val)
		switch val.Kind {
		case yaml.ScalarNode:
			if a, ok := d.action(p, val); ok {
				out[name] = string(a)
			}
		case yaml.MappingNode:
			out[name] = d.patternRules(p, name, val)
		default:
			d.TypeError(p, val, "an action (allow or deny) or a mapping of pattern: action", "")
		}
	}
	return out
}

// patternRules decodes {pattern: action} for the permission name. Values
// are strings in a map[string]any, the shape encoding/json and yaml.v3 give.
func (d *Decoder) patternRules(path, name string, n *yaml.Node) map[string]any {
	rules := map[string]any{}
	for key, val := range d.Pairs(path, n) {
		p := fmt.Sprintf("%s[%q]", path, key.Value)
		d.pos[p] = posOf(key)
		if msg, hint := checkPattern(name, key.Value); msg != "" {
			d.ErrorAt(key, hint, "%s: %s", p, msg)
			continue
		}
		if a, ok := d.action(p, val); ok {
			rules[key.Value] = string(a)
		}
	}
	return rules
}

// action decodes allow or deny.
func (d *Decoder) action(path string, n *yaml.Node) (permission.Action, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.TypeError(path, n, "allow or deny", "")
		return "", false
	}
	a, msg, hint := parseAction(n.Value)
	if msg != "" {
		d.ErrorAt(n, hint, "%s: %s", path, msg)
		return "", false
	}
	return a, true
}

// parseAction checks an action word; msg is empty when it is valid.
func parseAction(s string) (a permission.Action, msg, hint string) {
	switch permission.Action(s) {
	case permission.Allow, permission.Deny:
		return permission.Action(s), "", ""
	case "ask":
		return "", `"ask" is not available`, headlessAskHint
	}
	hint = "use allow or deny"
	if m := suggest(s, []string{"allow", "deny"}); m != "" {
		hint = fmt.Sprintf("did you mean %q?", m)
	}
	return "", fmt.Sprintf("bad action %q", s), hint
}

// checkPattern validates a rule pattern for the permission name; msg is
// empty when it is valid.
func checkPattern(name, pattern string) (msg, hint string) {
	switch {
	case strings.TrimSpace(pattern) == "":
		return "empty pattern", `use "*" to match everything`
	case name == permission.MCP:
		return checkMCPPattern(pattern)
	case !pathPermission(name):
		return "", ""
	case !doublestar.ValidatePattern(pattern):
		return fmt.Sprintf("bad glob %q", pattern), "check the brackets and braces; see https://github.com/bmatcuk/doublestar#patterns"
	case name != permission.ExternalDirectory && (strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, "./")):
		return fmt.Sprintf("pattern %q is not relative to the work tree", pattern), fmt.Sprintf("write %q", strings.TrimLeft(strings.TrimPrefix(pattern, "."), "/"))
	case name != permission.ExternalDirectory && slices.Contains(strings.Split(pattern, "/"), ".."):
		return fmt.Sprintf("pattern %q leaves the work tree", pattern), "paths outside the work tree are the external_directory permission"
	}
	return "", ""
}

// Ruleset converts the spec's permissions into rules; see RulesetOf.
func (s *Spec) Ruleset() (permission.Ruleset, error) {
	return RulesetOf(s.Permissions)
}

// RulesetOf converts a permissions block into rules sorted by permission
// and pattern. A bare action is the rule {name, "*", action}. Values may be
// an action (string or permission.Action) or a map of pattern to action
// (map[string]string, map[string]permission.Action or map[string]any).
// Unknown names, bad patterns and actions other than allow and deny ("ask"
// cannot be answered headless) are errors wrapping ErrInvalidSpec.
func RulesetOf(perms map[string]any) (permission.Ruleset, error) {
	var rules permission.Ruleset
	var problems []string
	add := func(name, pattern string, v any) {
		s, ok := actionString(v)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s[%q]: expected allow or deny, got %T", name, pattern, v))
			return
		}
		a, msg, hint := parseAction(s)
		if msg == "" && pattern != "*" {
			msg, hint = checkPattern(name, pattern)
		}
		if msg != "" {
			problems = append(problems, fmt.Sprintf("%s[%q]: %s (%s)", name, pattern, msg, hint))
			return
		}
		rules = append(rules, permission.Rule{Permission: name, Pattern: pattern, Action: a})
	}
	for name, v := range perms {
		if !slices.Contains(permissionNames(), name) {
			problems = append(problems, fmt.Sprintf("unknown permission %q (%s)", name, unknownKeyHint(name, permissionNames())))
			continue
		}
		if _, ok := actionString(v); ok {
			add(name, "*", v)
			continue
		}
		patterns, ok := patternMap(v)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: expected an action or a map of pattern to action, got %T", name, v))
			continue
		}
		for pattern, a := range patterns {
			add(name, pattern, a)
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, fmt.Errorf("permissions: %w: %s", ErrInvalidSpec, strings.Join(problems, "; "))
	}
	slices.SortFunc(rules, func(a, b permission.Rule) int {
		return strings.Compare(a.Permission+"\x00"+a.Pattern, b.Permission+"\x00"+b.Pattern)
	})
	return rules, nil
}

func actionString(v any) (string, bool) {
	switch a := v.(type) {
	case string:
		return a, true
	case permission.Action:
		return string(a), true
	}
	return "", false
}

func patternMap(v any) (map[string]any, bool) {
	out := map[string]any{}
	switch m := v.(type) {
	case map[string]string:
		for k, a := range m {
			out[k] = a
		}
	case map[string]permission.Action:
		for k, a := range m {
			out[k] = a
		}
	case map[string]any:
		return m, true
	default:
		return nil, false
	}
	return out, true
}

// checkMCPPattern validates an mcp pattern: "SERVER/TOOL", either part may
// use '*' ("github/*", "*/search"); "*" alone is every tool of every server.
func checkMCPPattern(pattern string) (msg, hint string) {
	if pattern == "*" {
		return "", ""
	}
	server, tool, ok := strings.Cut(pattern, "/")
	if !ok || server == "" || tool == "" {
		return fmt.Sprintf("pattern %q is not SERVER/TOOL", pattern), fmt.Sprintf("write %q for every tool of a server, or \"SERVER/TOOL\" for one", strings.Trim(pattern, "/")+"/*")
	}
	return "", ""
}
