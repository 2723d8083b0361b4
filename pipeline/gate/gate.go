// Package gate holds the post-run gates: checks of a finished run's work
// tree and patch that turn a success into a violation (exit 4). Each gate
// is a value holding what it reads, and Run checks a list of them in
// order; the pipeline's gates stage (pipeline/stage_gates.go) is that
// list, with a comment on each. Some gates put back what they guard (the
// git tripwire, the task spec) as they check it.
//
// Imports: runner/event, runner/snapshot, tools/permission,
// internal/safefs (reads that never follow a symlink), internal/doclink
// (the docs' published address) and go-git's index format.
package gate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/internal/doclink"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// Gate is one post-run gate.
type Gate interface {
	// Check judges the finished run: failed is its gate.failed event when
	// ok is true.
	Check() (failed event.GateFailed, ok bool)
}

// Run checks gates in order and returns the failures (empty, not nil,
// when every gate passed). Each failure's message ends with a link to its
// gate's section of docs/gates.md.
func Run(gates []Gate) []event.GateFailed {
	failed := []event.GateFailed{}
	for _, g := range gates {
		if f, ok := g.Check(); ok {
			f.Message += " (see " + DocURL(f.Gate) + ")"
			failed = append(failed, f)
		}
	}
	return failed
}

// docAnchors are the gates' sections of docs/gates.md.
var docAnchors = map[event.Gate]string{
	event.GateEditRules:   "edit-rules",
	event.GateGitTripwire: "git-tripwire",
	event.GateTaskSpec:    "task-spec",
	event.GateRunnerState: "runner-state",
	event.GateSecret:      "secrets",
	event.GateSubmodule:   "submodules",
}

// DocURL is the published link to gate g's section of docs/gates.md; the
// page alone for a gate without one.
func DocURL(g event.Gate) string {
	return doclink.URL("gates.md", docAnchors[g])
}

// GitTripwire puts back .git's watched files a command changed and
// reports them (gate git_tripwire).
type GitTripwire struct {
	Tripwire *Tripwire // nil: the gate passes
}

// Check runs the gate.
func (g GitTripwire) Check() (event.GateFailed, bool) {
	changed := g.Tripwire.restore()
	if len(changed) == 0 {
		return event.GateFailed{}, false
	}
	msg := "a command changed " + strings.Join(changed, ", ") + " (git would run programs named there); the runner put them back"
	if slices.ContainsFunc(changed, func(p string) bool { return strings.Contains(p, "objects/") }) {
		msg += " and removed new packs, but a replaced object file cannot be put back: git checks it out as it is now, so run `git fsck` and re-fetch or re-clone before trusting this repository"
	}
	if top := g.Tripwire.top; top.armed && slices.Contains(changed, ".git") {
		was := "the work tree had no .git: the runner removed the one a command made"
		if top.data != nil {
			was = "the work tree's .git was a gitfile: the runner put its bytes back"
		}
		msg += "; git finds this work tree's repository through .git, and " + was
	}
	if links := g.Tripwire.gitlinks; len(links) > 0 {
		msg += "; the index had gained the nested repositories " + strings.Join(links, ", ") +
			" as submodules (`git status` runs the programs their own git config names): it is as the run found it"
	}
	if lost := g.Tripwire.lost; len(lost) > 0 {
		msg += "; it could not put back " + strings.Join(lost, ", ") + ": do not run git in this work tree before checking them"
	}
	return event.GateFailed{Gate: event.GateGitTripwire, Paths: changed, Message: msg}, true
}

// Restorer puts back what it guards and names what had changed, and
// what it could not put back.
type Restorer interface {
	Restore() (changed, lost []string)
}

// RunnerState reports the runner's own state that a command changed,
// where no layer makes it read-only (gate runner_state): earlier runs'
// out dirs under .runner (put back here), this run's own files and the
// modes of the runner's directories (put back before the gates ran).
type RunnerState struct {
	Earlier      Restorer // .runner's earlier runs; nil: not watched
	Out          []string // this run's own files a command changed
	OutMessage   string   // what happened to them; "": none changed
	Modes        []string // paths whose modes a command changed
	ModesMessage string   // what happened to them; "": none changed
}

// Check runs the gate.
func (g RunnerState) Check() (event.GateFailed, bool) {
	var paths, msgs []string
	if g.Earlier != nil {
		if changed, lost := g.Earlier.Restore(); len(changed) > 0 {
			msg := "a command changed the runner's own state (" + strings.Join(changed, ", ") +
				": earlier runs' records; no layer of this sandbox makes .runner read-only); the runner put it back"
			if len(lost) > 0 {
				msg += ", except " + strings.Join(lost, ", ") + " (over the tripwire's memory cap: do not trust them)"
			}
			paths, msgs = append(paths, changed...), append(msgs, msg)
		}
	}
	if g.OutMessage != "" {
		paths, msgs = append(paths, g.Out...), append(msgs, g.OutMessage)
	}
	if g.ModesMessage != "" {
		paths, msgs = append(paths, g.Modes...), append(msgs, g.ModesMessage)
	}
	if len(paths) == 0 {
		return event.GateFailed{}, false
	}
	return event.GateFailed{Gate: event.GateRunnerState, Paths: paths, Message: strings.Join(msgs, "; ")}, true
}

// GitAttributes reports a changed .gitattributes or .gitmodules, which
// decide the programs git runs on checkout and diff (gate git_tripwire).
type GitAttributes struct {
	Files []snapshot.FileChange // the patch's files
}

// Check runs the gate.
func (g GitAttributes) Check() (event.GateFailed, bool) {
	var attrs []string
	for _, f := range g.Files {
		if b := filepath.Base(f.Path); b == ".gitattributes" || b == ".gitmodules" {
			attrs = append(attrs, f.Path)
		}
	}
	if len(attrs) == 0 {
		return event.GateFailed{}, false
	}
	return event.GateFailed{Gate: event.GateGitTripwire, Paths: attrs,
		Message: strings.Join(attrs, ", ") + " changed: they decide which programs git runs on checkout and diff (filters, submodules)"}, true
}

// Rules gives the task's permission rules (*spec.Spec does).
type Rules interface {
	Ruleset() (permission.Ruleset, error)
}

// EditRules judges every changed path of the patch by the edit rules
// (gate edit_rules): a command (go generate, a test, a build script) can
// write where the edit tools may not.
type EditRules struct {
	WorkTree string
	Files    []snapshot.FileChange // the patch's files
	Rules    Rules                 // an error from it passes the gate
}

// Check runs the gate.
func (g EditRules) Check() (event.GateFailed, bool) {
	rules, err := g.Rules.Ruleset()
	if err != nil {
		return event.GateFailed{}, false
	}
	paths, err := permission.NewPaths(g.WorkTree)
	if err != nil {
		return event.GateFailed{}, false
	}
	var denied, why []string
	for _, f := range g.Files {
		for _, p := range []string{f.Path, f.OldPath} {
			if p == "" || slices.Contains(denied, p) {
				continue
			}
			if d, _ := paths.Check(rules, permission.Edit, p); !d.Allowed {
				denied = append(denied, p)
				why = append(why, d.Reason)
			}
		}
	}
	if len(denied) == 0 {
		return event.GateFailed{}, false
	}
	return event.GateFailed{Gate: event.GateEditRules, Paths: denied,
		Message: fmt.Sprintf("the patch changes %s, which the edit rules deny; a command wrote it, nothing is published",
			pathsWithReasons(denied, why))}, true
}

// Submodules reports a submodule whose files changed (gate submodule):
// the patch holds the superproject's tree only, so the change would be
// lost silently.
type Submodules struct {
	WorkTree string
	Tripwire *Tripwire // the digests armed; nil: the gate passes
}

// Check runs the gate.
func (g Submodules) Check() (event.GateFailed, bool) {
	if g.Tripwire == nil {
		return event.GateFailed{}, false
	}
	var changed []string
	for sub, digest := range g.Tripwire.submodules {
		if treeDigest(g.Tripwire.root, sub) != digest {
			changed = append(changed, sub)
		}
	}
	if len(changed) == 0 {
		return event.GateFailed{}, false
	}
	slices.Sort(changed)
	return event.GateFailed{Gate: event.GateSubmodule, Paths: changed,
		Message: "files inside submodule " + strings.Join(changed, ", ") + " changed; the patch cannot carry them (change the submodule's own repository)"}, true
}
