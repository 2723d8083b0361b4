package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// startMirror starts mirroring the runner's files when a command could
// write them (main stage "mirror", after the sandbox is known and before
// any command: the MCP servers and the agent come later).
func (r *execRun) startMirror(_ context.Context) error {
	if !r.outReachable() {
		return skip("the out dir is out of the commands' reach")
	}
	dir := filepath.Join(r.runTemp.Path(), mirrorDir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("%w: out dir mirror: %w", ErrInfra, err)
	}
	r.modes.guard(dir)
	if err := r.outFiles.Start(dir); err != nil {
		return fmt.Errorf("%w: out dir mirror: %w", ErrInfra, err)
	}
	return nil
}

// outReachable reports whether a command could write a file the runner
// writes during the run: no layer makes it read-only (the namespaces
// layer mounts the out dir, log and cassette read-only) and it lies in
// the work tree or a writable hole (anywhere, with the sandbox off).
func (r *execRun) outReachable() bool {
	if r.sandbox == nil {
		return false
	}
	if slices.Contains(r.sandbox.Layers(), sandbox.LayerNamespaces) {
		return false
	}
	if r.sandbox.Mode() == sandbox.ModeOff {
		return true
	}
	for _, p := range []string{r.outDir, r.eventsPath, r.opts.Record} {
		if p == "" {
			continue
		}
		for _, w := range append([]string{r.workTree}, r.writable...) {
			if within(p, w) {
				return true
			}
		}
	}
	return false
}
