package pipeline

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The run's own out dir (and its log, history and cassette wherever they
// are) is read-only to commands under the namespaces layer. Under
// Landlock only (and with the sandbox off) a command can write it when it
// lies in the work tree, since Landlock cannot take rights away below the
// writable tree. There every file the runner writes there goes through
// r.outFiles (internal/mirror), which, once started, copies each byte into
// the run's temporary directory, out of the commands' reach; after the
// last command is gone the out dir is compared with the copy, put back
// and the run fails with gate runner_state naming what changed.

// mirrorDir is the run temp dir's subdirectory holding the copies.
const mirrorDir = "out-mirror"

// within reports whether path is dir or below it (both made absolute).
func within(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	return err1 == nil && err2 == nil && (p == d || strings.HasPrefix(p, d+string(filepath.Separator)))
}

// stopCommands ends every process that runs for the agent: the MCP stdio
// servers, then the sandbox's zygotes with whatever they still run (a
// leftover of the last command or check). Called first when the run
// finishes, so the final snapshot, the out dir's check and the outputs
// see a tree no command changes any more.
func (r *execRun) stopCommands() {
	r.stopMCP()
	if r.sandbox != nil {
		_ = r.sandbox.Close() // the network proxy stays: run.finished reports what it saw
	}
}

// restoreOut compares the mirrored files with their copies and puts
// them back (mirror.Set.Restore), once stopCommands ran. The paths are
// kept for the runner_state gate, work-tree-relative where they are in
// it.
func (r *execRun) restoreOut() {
	changed, err := r.outFiles.Restore()
	for _, p := range changed {
		r.outChanged = append(r.outChanged, r.treeRel(p))
	}
	if err != nil {
		r.outLost = err
		r.log.Warn("out dir restore", "error", err)
	}
}

// treeRel is p relative to the work tree ("…" slash path) when it lies
// in it, else p.
func (r *execRun) treeRel(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil || r.workTree == "" || !within(abs, r.workTree) {
		return p
	}
	rel, err := filepath.Rel(r.workTree, abs)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// outDirMessage is the runner_state gate's message for this run's own
// files, "" when none changed.
func (r *execRun) outDirMessage() string {
	if len(r.outChanged) == 0 {
		return ""
	}
	msg := "a command changed this run's own record (" + strings.Join(r.outChanged, ", ") +
		": Landlock cannot make the out dir inside the work tree read-only, and a directory above a read-only mount can be moved); " +
		"the runner put back every byte it wrote and removed what it did not"
	if r.outLost != nil {
		msg += fmt.Sprintf(", except: %v (do not trust those)", r.outLost)
	}
	return msg
}
