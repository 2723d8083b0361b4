package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/github"
)

// checkGitHubRef checks a {{ .GitHub.X }} field against github.Context
// and a {{ .Event.a.b }} key path against the payloads of the events the
// runner handles (github.EventFields: issue_comment, issues,
// pull_request, pull_request_review_comment, push, schedule,
// workflow_dispatch). It returns "" when the reference exists, else the
// message and a hint (a did-you-mean when a near name exists).
func checkGitHubRef(ref templateRef) (msg, hint string) {
	if ref.github != "" {
		fields := github.ContextFields()
		if slices.Contains(fields, ref.github) {
			return "", ""
		}
		hint = "the .GitHub fields are " + strings.Join(fields, ", ") + " (see docs/spec.md, Templates)"
		if s := suggest(ref.github, fields); s != "" {
			hint = fmt.Sprintf("did you mean .GitHub.%s? The fields are CamelCase", s)
		}
		return fmt.Sprintf("unknown template field .GitHub.%s", ref.github), hint
	}
	return checkEventPath(ref.event, github.EventFields())
}

// checkEventPath checks .Event.<path> against the known key paths; a key
// below an open map (workflow_dispatch inputs) is always accepted.
func checkEventPath(path []string, known []string) (msg, hint string) {
	for i := range path {
		prefix := strings.Join(path[:i+1], ".")
		if slices.Contains(github.OpenEventMaps(), strings.Join(path[:i], ".")) && i > 0 {
			return "", ""
		}
		if slices.Contains(known, prefix) {
			continue
		}
		parent := strings.Join(path[:i], ".")
		siblings := childKeys(known, parent)
		if len(siblings) == 0 { // a leaf of every payload: nothing below it
			return fmt.Sprintf(".Event.%s: .Event.%s has no fields in any payload the runner knows", prefix, parent),
				"the event payloads are listed in docs/spec.md (Templates)"
		}
		hint = "no payload of issue_comment, issues, pull_request, pull_request_review_comment, push, schedule or workflow_dispatch has it"
		if s := suggest(path[i], siblings); s != "" {
			hint = fmt.Sprintf("did you mean .Event.%s?", strings.TrimPrefix(parent+"."+s, "."))
		}
		return fmt.Sprintf("unknown event field .Event.%s", prefix), hint
	}
	return "", ""
}

// childKeys are the keys directly under parent ("" for the top level).
func childKeys(known []string, parent string) []string {
	var out []string
	prefix := parent + "."
	if parent == "" {
		prefix = ""
	}
	for _, k := range known {
		rest, ok := strings.CutPrefix(k, prefix)
		if ok && rest != "" && !strings.Contains(rest, ".") {
			out = append(out, rest)
		}
	}
	return out
}
