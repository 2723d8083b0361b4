package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// startMirror starts mirroring the runner's files when a command could
// write them (main stage "mirror", after the sandbox is known and before
// any command: the MCP servers and the agent come later).
func (r *execRun) startMirror(_ context.Context) error {
	if !r.outReachable() {
		return skip("the out dir is out of the commands' reach")
	}
	dir := filepath.Join(r.runTemp.Path(), ownfiles.MirrorDir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("%w: out dir mirror: %w", ErrInfra, err)
	}
	r.modes.Guard(dir)
	if err := r.outFiles.Start(dir); err != nil {
		return fmt.Errorf("%w: out dir mirror: %w", ErrInfra, err)
	}
	return nil
}

// outReachable reports whether a command could write or displace a file
// the runner writes during the run: it lies in the work tree or a
// writable hole (anywhere, with the sandbox off) and no layer keeps it in
// place. The namespaces layer mounts the out dir, log and cassette
// read-only, but a directory above such a mount that is not .runner (a
// direct child of the work tree) can be moved away and a symlink put in
// its place (--events logs/run/events.jsonl).
func (r *execRun) outReachable() bool {
	if r.sandbox == nil {
		return false
	}
	if slices.Contains(r.sandbox.Layers(), sandbox.LayerNamespaces) {
		return r.outMovable()
	}
	if r.sandbox.Mode() == sandbox.ModeOff {
		return true
	}
	for _, p := range []string{r.outDir, r.eventsPath, r.opts.Record} {
		if p == "" {
			continue
		}
		for _, w := range append([]string{r.workTree}, r.writable...) {
			if ownfiles.Within(p, w) {
				return true
			}
		}
	}
	return false
}

// outMovable reports whether a run file in the work tree lies below a
// directory a command may rename: its read-only mount (excludes) is not a
// direct child of the work tree.
func (r *execRun) outMovable() bool {
	var top []string // read-only mounts directly below the work tree
	for _, rel := range r.excludes() {
		if !strings.Contains(rel, "/") {
			top = append(top, filepath.Join(r.workTree, rel))
		}
	}
	for _, p := range []string{r.outDir, r.eventsPath, r.opts.Record} {
		if p == "" || !ownfiles.Within(p, r.workTree) {
			continue
		}
		if !slices.ContainsFunc(top, func(d string) bool { return ownfiles.Within(p, d) }) {
			return true
		}
	}
	return false
}

// restoreOut puts back this run's out dir from its mirror once
// stopCommands ran, keeping what changed for the runner_state gate.
func (r *execRun) restoreOut() {
	r.outChanged, r.outLost = ownfiles.RestoreOut(r.outFiles, r.workTree)
	if r.outLost != nil {
		r.log.Warn("out dir restore", "error", r.outLost)
	}
}
