package gate

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed43ef5acb/runner/runner/event"
)

// TaskSpec is the task_spec gate: the task spec file this run runs under, as the run loaded
// it, when it lies in the work tree (with --isolate: in the repository
// the copy was made from, so its copy in the work tree is watched). An
// agent that may edit it, or a command that writes it, would otherwise
// rewrite the permissions, limits and checks of the next run on this
// tree (a cron job, a run on the pull request made from the patch).
// The gate puts it back and fails the run.
type TaskSpec struct {
	rel  string // work-tree-relative slash path
	abs  string // in the work tree
	data []byte
	mode fs.FileMode
}

// ArmTaskSpec records the copy in workTree of the spec file task, which
// lies in repo (the work tree, or the repository --isolate copied); nil
// when the spec is outside it.
func ArmTaskSpec(task, repo, workTree string) *TaskSpec {
	spec, err1 := filepath.Abs(task)
	if err1 == nil {
		spec, err1 = filepath.EvalSymlinks(spec)
	}
	repo, err2 := filepath.EvalSymlinks(repo)
	if err1 != nil || err2 != nil {
		return nil
	}
	rel, err := filepath.Rel(repo, spec)
	if err != nil || !filepath.IsLocal(rel) {
		return nil
	}
	g := &TaskSpec{rel: filepath.ToSlash(rel), abs: filepath.Join(workTree, rel)}
	fi, err := os.Lstat(g.abs)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if g.data, err = os.ReadFile(g.abs); err != nil {
		return nil
	}
	g.mode = fi.Mode().Perm()
	return g
}

// restore puts the spec back as it was armed and reports whether it had
// changed (content, mode, or no longer a regular file).
func (g *TaskSpec) restore() bool {
	if g == nil {
		return false
	}
	fi, err := os.Lstat(g.abs)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == g.mode {
		if cur, err := os.ReadFile(g.abs); err == nil && bytes.Equal(cur, g.data) {
			return false
		}
	}
	if err == nil && !fi.Mode().IsRegular() {
		_ = os.RemoveAll(g.abs)
	}
	_ = os.MkdirAll(filepath.Dir(g.abs), 0o755)
	_ = os.WriteFile(g.abs, g.data, g.mode)
	_ = os.Chmod(g.abs, g.mode) // WriteFile keeps the mode of a file that exists
	return true
}

// Check reports a changed task spec and puts it back.
func (g *TaskSpec) Check() (event.GateFailed, bool) {
	if !g.restore() {
		return event.GateFailed{}, false
	}
	return event.GateFailed{Gate: event.GateTaskSpec, Paths: []string{g.rel}, Message: fmt.Sprintf(
		"the task spec this run runs under, %s, changed during the run (an edit or a command: its permissions, limits "+
			"and checks decide the next run on this tree); the runner put it back and nothing is published. "+
			"Keep the spec outside the work tree or under a path the edit rules deny (\".github/**\": deny)", g.rel)}, true
}
