package pipeline

import (
	"bytes"
	"context"

	"github.com/seed43ef5acb/runner/internal/safefs"
	"github.com/seed43ef5acb/runner/pipeline/gate"
	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
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
	failed := gate.Run(r.gates())
	for _, g := range failed {
		if g.Gate == event.GateSecret {
			r.secretPaths = g.Paths
		}
		if err := r.emit(g); err != nil {
			return err
		}
	}
	r.violations = failed
	return nil
}

// gates are the post-run gates in the order they run.
func (r *execRun) gates() []gate.Gate {
	modes, modesMsg := r.modes.Message(r.workTree)
	return []gate.Gate{
		// First: .git put back before anything else reads the tree.
		gate.GitTripwire{Tripwire: r.tripwire},
		// The runner's own files: earlier runs, this run's out dir, modes.
		gate.RunnerState{Earlier: r.stateTripwire, Out: r.outChanged, OutMessage: ownfiles.OutMessage(r.outChanged, r.outLost), Modes: modes, ModesMessage: modesMsg},
		// The task spec put back, so the next run reads the one given.
		r.specGuard,
		// .gitattributes and .gitmodules name programs git runs.
		gate.GitAttributes{Files: r.files},
		// A command can write where the edit tools may not.
		gate.EditRules{WorkTree: r.workTree, Files: r.files, Rules: r.spec},
		// After the edit rules: the patch file is rewritten redacted.
		gate.Secret{WorkTree: r.workTree, PatchPath: r.patchPath, Files: r.files, Redactor: r.redactor, Protected: r.protected.holds},
		// A submodule's change is not in the patch: it would be lost.
		gate.Submodules{WorkTree: r.workTree, Tripwire: r.tripwire},
	}
}

// redactOutFiles redacts, in place, the files under the out dir that
// commands wrote unredacted: bash's full output (tool-output/) and MCP
// servers' stderr (mcp/). No symlink below the out dir is followed.
func (r *execRun) redactOutFiles() {
	if r.outReal == "" || r.redactor == nil {
		return
	}
	out := safefs.New(r.outReal)
	for _, dir := range []string{outdir.ToolOutputDir, outdir.MCPStderrDir} {
		_ = out.Walk(dir, func(e *safefs.Entry) error {
			if !e.Mode.IsRegular() {
				return nil
			}
			data, err := e.ReadFile(-1)
			if err != nil {
				return nil //nolint:nilerr // nothing to redact
			}
			if red := r.redactor.RedactBytes(data); !bytes.Equal(red, data) {
				_ = out.WriteFile(e.Rel, red, e.Mode.Perm())
			}
			return nil
		})
	}
}
