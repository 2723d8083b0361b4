package permission

import (
	"fmt"
	"strconv"
)

// String renders a rule the way the spec writes it: `edit ".github/**": deny`.
func (r Rule) String() string {
	return fmt.Sprintf("%s %s: %s", r.Permission, strconv.Quote(r.Pattern), r.Action)
}

// Evaluate decides one (permission, pattern) pair: allowed only when an allow
// rule matches and no deny rule matches. Path permissions (read, edit,
// external_directory) match with doublestar globs against a slash path;
// every other permission matches with command wildcards ('*' matches
// anything, and a trailing " *" also matches the bare command).
//
// The decision's Rule is the deny rule that matched, else the allow rule
// that matched (the most specific, i.e. the longest pattern), nil for the
// default deny.
func (rs Ruleset) Evaluate(permission, pattern string) Decision {
	if isPathPermission(permission) {
		m := func(r Rule) bool { return MatchPath(r.Pattern, pattern) }
		return rs.Decide(permission, pattern, m, m)
	}
	subject := []rune(pattern)
	m := func(r Rule) bool { return MatchAll(r.Pattern, subject) }
	return rs.Decide(permission, pattern, m, m)
}

// Decide applies the rules of one permission: allowMatch says whether an
// allow rule covers the call, denyMatch whether a deny rule may match it.
func (rs Ruleset) Decide(permission, display string, allowMatch, denyMatch func(Rule) bool) Decision {
	d := Decision{Permission: permission, Pattern: display}
	var allow, deny *Rule
	for i := range rs {
		r := &rs[i]
		if r.Permission != permission {
			continue
		}
		switch r.Action {
		case Deny:
			if denyMatch(*r) && moreSpecific(r, deny) {
				deny = r
			}
		case Allow:
			if allowMatch(*r) && moreSpecific(r, allow) {
				allow = r
			}
		}
	}
	switch {
	case deny != nil:
		rule := *deny
		d.Rule = &rule
		d.Reason = fmt.Sprintf("denied by rule %s", rule)
	case allow != nil:
		rule := *allow
		d.Rule = &rule
		d.Allowed = true
		d.Reason = fmt.Sprintf("allowed by rule %s", rule)
	default:
		d.Reason = fmt.Sprintf("no rule allows %s %s (default deny)", permission, strconv.Quote(display))
	}
	return d
}

// HasAllow reports whether rs has any allow rule for permission, whatever
// its pattern: without one every call that needs the permission is denied.
func (rs Ruleset) HasAllow(permission string) bool {
	for _, r := range rs {
		if r.Permission == permission && r.Action == Allow {
			return true
		}
	}
	return false
}

// moreSpecific reports whether r should replace best as the deciding rule:
// a longer pattern is more specific; ties keep the earlier rule.
func moreSpecific(r, best *Rule) bool {
	return best == nil || len(r.Pattern) > len(best.Pattern)
}

// DefaultDeny is a denial that no rule decided, with a reason.
func DefaultDeny(permission, pattern, reason string) Decision {
	return Decision{Permission: permission, Pattern: pattern, Reason: reason}
}
