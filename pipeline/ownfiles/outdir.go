package ownfiles

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/internal/mirror"
)

// The run's own out dir (and its log, history and cassette wherever they
// are) is read-only to commands under the namespaces layer. Under
// Landlock only (and with the sandbox off) a command can write it when it
// lies in the work tree, since Landlock cannot take rights away below the
// writable tree. There every file the runner writes there goes through
// the run's mirror.Set (internal/mirror), which, once started, copies
// each byte into the run's temporary directory, out of the commands'
// reach; after the last command is gone the out dir is compared with the
// copy, put back and the run fails with gate runner_state naming what
// changed.

// MirrorDir is the run temp dir's subdirectory holding the copies.
const MirrorDir = "out-mirror"

// Within reports whether path is dir or below it (both made absolute).
func Within(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	return err1 == nil && err2 == nil && (p == d || strings.HasPrefix(p, d+string(filepath.Separator)))
}

// RestoreOut compares the mirrored files with their copies and puts
// them back (mirror.Set.Restore), once no command runs. The paths are
// returned for the runner_state gate, work-tree-relative where they are
// in it, with what could not be put back.
func RestoreOut(set *mirror.Set, workTree string) (changed []string, lost error) {
	abs, err := set.Restore()
	for _, p := range abs {
		changed = append(changed, TreeRel(workTree, p))
	}
	return changed, err
}

// TreeRel is p relative to workTree ("…" slash path) when it lies in
// it, else p.
func TreeRel(workTree, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil || workTree == "" || !Within(abs, workTree) {
		return p
	}
	rel, err := filepath.Rel(workTree, abs)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// OutMessage is the runner_state gate's message for this run's own
// files a command changed, "" when none did; lost is what could not be
// put back (mirror.Set.Restore's error).
func OutMessage(changed []string, lost error) string {
	if len(changed) == 0 {
		return ""
	}
	msg := "a command changed this run's own record (" + strings.Join(changed, ", ") +
		": Landlock cannot make the out dir inside the work tree read-only, and a directory above a read-only mount can be moved); " +
		"the runner put back every byte it wrote and removed what it did not"
	if lost != nil {
		msg += fmt.Sprintf(", except: %v (do not trust those)", lost)
	}
	return msg
}
