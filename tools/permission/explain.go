package permission

import (
	"fmt"
	"strconv"
	"strings"
)

// Query is one question for `runner policy check`: may Permission act on
// Target? Permission "bash" takes a command; "read" and "edit" take a path;
// any other permission is evaluated on Target as given.
type Query struct {
	Permission string `json:"permission"`
	Target     string `json:"target"`
}

// Explanation is the answer to a Query with its provenance: every command
// or path judged and the rule that decided each ("default deny" when none).
type Explanation struct {
	Verdict string  `json:"verdict"` // "allow" or "deny"
	Allowed bool    `json:"allowed"`
	Query   Query   `json:"query"`
	Reason  string  `json:"reason"`
	Checks  []Check `json:"checks"`
}

// BashChecker judges a bash command line against a ruleset; bashcheck.Check
// is the one the runner uses (this package cannot import it: it sits above).
type BashChecker func(rs Ruleset, workTree, command string) Verdict

// Explain answers q against rs for the work tree at workTree; bash
// commands are judged by bash. The CLI prints Text() or the JSON encoding
// and exits 0 when Allowed, 1 otherwise.
func Explain(rs Ruleset, workTree string, q Query, bash BashChecker) Explanation {
	e := Explanation{Query: q}
	switch q.Permission {
	case Bash:
		v := bash(rs, workTree, q.Target)
		e.Allowed, e.Reason, e.Checks = v.Allowed, v.Reason, v.Checks
	case Read, Edit:
		d := CheckPath(rs, workTree, q.Permission, q.Target)
		e.Allowed, e.Reason = d.Allowed, d.Reason
		e.Checks = []Check{{Kind: "path", Subject: q.Target, Decision: d}}
	default:
		d := rs.Evaluate(q.Permission, q.Target)
		e.Allowed, e.Reason = d.Allowed, d.Reason
		e.Checks = []Check{{Kind: q.Permission, Subject: q.Target, Decision: d}}
	}
	e.Verdict = verdictName(e.Allowed)
	return e
}

// Text renders the explanation for a terminal:
//
//	deny: bash "git status; rm -rf ~"
//	  allow  command   git status    rule bash "git status": allow
//	  deny   command   rm -rf ~      no rule allows … (default deny)
func (e Explanation) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s\n", e.Verdict, e.Query.Permission, strconv.Quote(e.Query.Target))
	for _, c := range e.Checks {
		fmt.Fprintf(&b, "  %-5s  %-8s  %s\n", verdictName(c.Decision.Allowed), c.Kind, c.Subject)
		fmt.Fprintf(&b, "         %s\n", provenance(c.Decision))
	}
	return b.String()
}

// provenance says which rule or built-in protection decided, or why
// nothing did.
func provenance(d Decision) string {
	switch {
	case d.Rule != nil:
		return fmt.Sprintf("rule %s (%s %s)", d.Rule, d.Permission, strconv.Quote(d.Pattern))
	case d.Protection != "":
		return ProtectionText(d.Protection) + ": " + d.Reason
	}
	return d.Reason
}

func verdictName(allowed bool) string {
	if allowed {
		return string(Allow)
	}
	return string(Deny)
}
