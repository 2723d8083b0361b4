package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/permission/bashcheck"
)

// Request is one permission check a call needs before it runs.
type Request struct {
	// Permission is a permission name (permission.Read, Edit, Bash, …).
	Permission string
	// Target is a path for read and edit (relative to the work tree or
	// absolute), a command line for bash, the pattern for anything else.
	Target string
}

// Requester is implemented by tools whose calls need permission checks;
// Guard type-asserts it. Permissions must not touch the file system beyond
// reading; an error means the input is invalid (reported to the model as an
// error Result).
type Requester interface {
	Permissions(input json.RawMessage) ([]Request, error)
}

// pathFilterKey carries a PathFilter in a call's context.
type pathFilterKey struct{}

// PathFilter reports whether a tool that walks the tree (glob, grep, list)
// may show the work-tree-relative slash path rel. Guard installs one in the
// context of each call it lets through, so a walk never shows what a direct
// read would be denied.
//
// symlink says rel is a symlink; its parent directories never are (walks
// open each from the work tree without following symlinks), so only a
// symlink needs resolving and the check costs the same at any depth.
type PathFilter func(rel string, symlink bool) bool

// pathFilter returns the context's PathFilter, or one that allows all.
func pathFilter(ctx context.Context) PathFilter {
	if f, ok := ctx.Value(pathFilterKey{}).(PathFilter); ok && f != nil {
		return f
	}
	return func(string, bool) bool { return true }
}

// Guard wraps t so that every call is checked against rs before it runs: a
// denied call returns an error Result with Denial set and the tool never
// runs. Tools that do not implement Requester are checked as the permission
// named after the tool, pattern "*" (deny by default).
func Guard(t Tool, rs permission.Ruleset, workTree string) Tool {
	p, err := permission.NewPaths(workTree)
	return &guarded{tool: t, rules: rs, paths: p, pathsErr: err}
}

type guarded struct {
	tool     Tool
	rules    permission.Ruleset
	paths    permission.Paths
	pathsErr error
}

func (g *guarded) Info() Info { return g.tool.Info() }

// Unwrap returns the guarded tool (for OriginOf).
func (g *guarded) Unwrap() Tool { return g.tool }

// Run checks the call's requests in order and runs the tool when all pass.
func (g *guarded) Run(ctx context.Context, call Call) (Result, error) {
	name := g.tool.Info().Name
	reqs := []Request{{Permission: name, Target: "*"}}
	if rq, ok := g.tool.(Requester); ok {
		var err error
		if reqs, err = rq.Permissions(call.Input); err != nil {
			return badArguments(name, err), nil
		}
	}
	checked := map[string]permission.Target{}
	for _, r := range reqs {
		d, t := g.check(r)
		if d != nil {
			return deniedResult(name, d), nil
		}
		if t != nil {
			checked[r.Target] = *t
		}
	}
	ctx = withChecked(ctx, checked)
	ctx = context.WithValue(ctx, pathFilterKey{}, PathFilter(g.readable))
	return g.tool.Run(ctx, call)
}

// readable is the PathFilter for walks: a read of rel would be allowed.
func (g *guarded) readable(rel string, symlink bool) bool {
	if g.pathsErr != nil {
		return false
	}
	return g.paths.CheckWalked(g.rules, permission.Read, rel, symlink).Allowed
}

// check returns the denial of r, or nil when it is allowed, with the
// resolved file a read or edit was judged on (the tool acts on it).
func (g *guarded) check(r Request) (*Denial, *permission.Target) {
	if g.pathsErr != nil && (r.Permission == permission.Bash || r.Permission == permission.Read || r.Permission == permission.Edit) {
		return &Denial{Permission: r.Permission, Pattern: r.Target, Reason: "the work tree cannot be resolved: " + g.pathsErr.Error()}, nil
	}
	switch r.Permission {
	case permission.Bash:
		var opts bashcheck.Options
		if h, ok := g.tool.(protectedHider); ok {
			opts.ProtectedHidden = h.ProtectedHidden()
		}
		v := bashcheck.CheckWith(g.rules, g.paths, r.Target, opts)
		if denied := v.DeniedAll(); len(denied) > 0 {
			return denialOf(denied[0].Decision, deniedParts(denied)), nil
		}
		return nil, nil
	case permission.Read, permission.Edit:
		d, t := g.paths.Check(g.rules, r.Permission, r.Target)
		if !d.Allowed {
			return denialOf(d, d.Reason), nil
		}
		return nil, &t
	}
	if d := g.rules.Evaluate(r.Permission, r.Target); !d.Allowed {
		return denialOf(d, d.Reason), nil
	}
	return nil, nil
}

// maxDeniedParts bounds how many denied parts of a command a denial names.
const maxDeniedParts = 3

// deniedParts is the reason of a bash denial: each denied part of the
// command with its reason (the denied commands, else every denied path or
// write), the first maxDeniedParts and a count of the rest.
func deniedParts(denied []permission.Check) string {
	// A denied command's own paths are denied too (`rm -rf /`: the
	// command, the path, the write): name the commands when some are.
	var cmds []permission.Check
	for _, c := range denied {
		if c.Kind == permission.KindCommand {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) > 0 {
		denied = cmds
	}
	parts := make([]string, 0, maxDeniedParts+1)
	for i, c := range denied {
		if i == maxDeniedParts {
			parts = append(parts, fmt.Sprintf("and %d more denied part(s)", len(denied)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", c.Kind, strconv.Quote(c.Subject), c.Decision.Reason))
	}
	return strings.Join(parts, "; ")
}

// protectedHider is a tool whose commands run where the OS sandbox may
// hide protected files (the bash tool).
type protectedHider interface{ ProtectedHidden() bool }

func denialOf(d permission.Decision, reason string) *Denial {
	den := &Denial{Permission: d.Permission, Pattern: d.Pattern, Protection: d.Protection, Reason: reason}
	if d.Rule != nil {
		s := d.Rule.String()
		den.Rule = &s
	}
	return den
}

// deniedResult is what the model reads when a call is refused.
func deniedResult(tool string, d *Denial) Result {
	rule := "no rule allows it (default deny)"
	switch {
	case d.Rule != nil:
		rule = "rule " + *d.Rule
	case d.Protection != "":
		rule = permission.ProtectionText(d.Protection)
	}
	out := fmt.Sprintf("Permission denied: %s %s (%s).\n%s\n"+
		"The task's permissions do not allow this call, and retrying it will not help. "+
		"Use a different approach that the permissions allow, or finish and explain what you could not do.",
		d.Permission, strconv.Quote(d.Pattern), rule, d.Reason)
	return Result{Output: out, IsError: true, Denial: d, Metadata: map[string]any{"tool": tool}}
}
