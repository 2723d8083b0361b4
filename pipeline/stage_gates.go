package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// runGates is the final stage after the patch: the post-run gates. Each
// violation is a gate.failed event; any makes the run's status violation
// (decideStatus). It also redacts secrets in the out dir's tool output
// files.
func (r *execRun) runGates(_ context.Context) error {
	r.redactOutFiles()
	if r.writer == nil {
		return skip("no outputs")
	}
	gates := []event.GateFailed{}
	if changed := r.tripwire.restore(); len(changed) > 0 {
		msg := "a command changed " + strings.Join(changed, ", ") + " (git would run programs named there); the runner put them back"
		if slices.ContainsFunc(changed, func(p string) bool { return strings.Contains(p, "objects/") }) {
			msg += " and removed new packs, but a replaced object file cannot be put back: git checks it out as it is now, so run `git fsck` and re-fetch or re-clone before trusting this repository"
		}
		gates = append(gates, event.GateFailed{Gate: event.GateGitTripwire, Paths: changed, Message: msg})
	}
	if g, ok := r.stateGate(); ok {
		gates = append(gates, g)
	}
	if g, ok := r.specGate(); ok {
		gates = append(gates, g)
	}
	var attrs []string
	for _, f := range r.files {
		if b := filepath.Base(f.Path); b == ".gitattributes" || b == ".gitmodules" {
			attrs = append(attrs, f.Path)
		}
	}
	if len(attrs) > 0 {
		gates = append(gates, event.GateFailed{Gate: event.GateGitTripwire, Paths: attrs,
			Message: strings.Join(attrs, ", ") + " changed: they decide which programs git runs on checkout and diff (filters, submodules)"})
	}
	if g, ok := r.editGate(); ok {
		gates = append(gates, g)
	}
	if g, ok := r.secretGate(); ok {
		gates = append(gates, g)
	}
	if g, ok := r.submoduleGate(); ok {
		gates = append(gates, g)
	}
	for _, g := range gates {
		if err := r.emit(g); err != nil {
			return err
		}
	}
	r.violations = gates
	return nil
}

// stateGate reports the runner's own state that a command changed, where
// no layer makes it read-only: earlier runs' out dirs under .runner (the
// state tripwire, put back here) and this run's own files (put back by
// restoreOut when the commands ended).
func (r *execRun) stateGate() (event.GateFailed, bool) {
	var paths, msgs []string
	if r.tripwire != nil {
		if changed, lost := r.tripwire.state.restore(); len(changed) > 0 {
			msg := "a command changed the runner's own state (" + strings.Join(changed, ", ") +
				": earlier runs' records; no layer of this sandbox makes .runner read-only); the runner put it back"
			if len(lost) > 0 {
				msg += ", except " + strings.Join(lost, ", ") + " (over the tripwire's memory cap: do not trust them)"
			}
			paths, msgs = append(paths, changed...), append(msgs, msg)
		}
	}
	if msg := r.outDirMessage(); msg != "" {
		paths, msgs = append(paths, r.outChanged...), append(msgs, msg)
	}
	if changed, msg := r.modesMessage(); msg != "" {
		paths, msgs = append(paths, changed...), append(msgs, msg)
	}
	if len(paths) == 0 {
		return event.GateFailed{}, false
	}
	return event.GateFailed{Gate: event.GateRunnerState, Paths: paths, Message: strings.Join(msgs, "; ")}, true
}

// editGate judges every changed path of the patch by the edit rules: a
// command (go generate, a test, a build script) can write where the edit
// tools may not.
func (r *execRun) editGate() (event.GateFailed, bool) {
	rules, err := r.spec.Ruleset()
	if err != nil {
		return event.GateFailed{}, false
	}
	paths, err := permission.NewPaths(r.workTree)
	if err != nil {
		return event.GateFailed{}, false
	}
	var denied, why []string
	for _, f := range r.files {
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

// pathsWithReasons lists paths each with the reason that denied it, paths
// of the same reason together, in the order the reasons first appear:
// "a, b (reason 1) and c (reason 2)". A path out of the tree (a symlink
// pointing out) thus carries its external_directory reason, not the rule
// of the path listed before it.
func pathsWithReasons(paths, reasons []string) string {
	var order []string
	by := map[string][]string{}
	for i, p := range paths {
		if _, ok := by[reasons[i]]; !ok {
			order = append(order, reasons[i])
		}
		by[reasons[i]] = append(by[reasons[i]], p)
	}
	parts := make([]string, len(order))
	for i, reason := range order {
		parts[i] = fmt.Sprintf("%s (%s)", strings.Join(by[reason], ", "), reason)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// submoduleGate reports a submodule whose files changed: the patch holds
// the superproject's tree only, so the change would be lost silently.
func (r *execRun) submoduleGate() (event.GateFailed, bool) {
	if r.tripwire == nil {
		return event.GateFailed{}, false
	}
	var changed []string
	for sub, digest := range r.tripwire.submodules {
		if treeDigest(filepath.Join(r.workTree, filepath.FromSlash(sub))) != digest {
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

// redactOutFiles redacts, in place, the files under the out dir that
// commands wrote unredacted: bash's full output (tool-output/) and MCP
// servers' stderr (mcp/).
func (r *execRun) redactOutFiles() {
	if r.outDir == "" || r.redactor == nil {
		return
	}
	for _, dir := range []string{toolOutputDir, "mcp"} {
		_ = filepath.WalkDir(filepath.Join(r.outDir, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil //nolint:nilerr // nothing to redact
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil //nolint:nilerr
			}
			if red := r.redactor.RedactBytes(data); !bytes.Equal(red, data) {
				_ = os.WriteFile(p, red, 0o644)
			}
			return nil
		})
	}
}

// submodulePaths lists the "path = …" entries of the work tree's
// .gitmodules.
func submodulePaths(workTree string) []string {
	f, err := os.Open(filepath.Join(workTree, ".gitmodules"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.TrimSpace(k) == "path" {
			if p := filepath.ToSlash(filepath.Clean(strings.TrimSpace(v))); p != "." && !strings.HasPrefix(p, "../") {
				out = append(out, p)
			}
		}
	}
	return out
}

// treeDigest hashes the names, modes and contents of the files below dir
// (its .git excluded); "" when dir is missing.
func treeDigest(dir string) string {
	h := sha256.New()
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr
		}
		found = true
		if d.Name() == ".git" && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%v\x00", rel, d.Type())
		if d.Type().IsRegular() {
			if data, err := os.ReadFile(p); err == nil {
				h.Write(data)
			}
		}
		return nil
	})
	if !found {
		return ""
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
