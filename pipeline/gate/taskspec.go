package gate

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/seed43ef5acb/runner/internal/safefs"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TaskSpec is the task_spec gate: the task spec file this run runs under, as the run loaded
// it, when it lies in the work tree (with --isolate: in the repository
// the copy was made from, so its copy in the work tree is watched). An
// agent that may edit it, or a command that writes it, would otherwise
// rewrite the permissions, limits and checks of the next run on this
// tree (a cron job, a run on the pull request made from the patch).
// The gate puts it back and fails the run.
//
// Its reads and the repair go through internal/safefs: a symlink in the
// spec's place or a parent's is replaced, never written through.
type TaskSpec struct {
	root *safefs.Root // the work tree
	rel  string       // work-tree-relative slash path
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
	g := &TaskSpec{root: safefs.New(resolved(workTree)), rel: filepath.ToSlash(rel)}
	fi, err := g.root.Lstat(g.rel)
	if err != nil || !fi.Mode.IsRegular() {
		return nil
	}
	if g.data, err = g.root.ReadFile(g.rel, -1); err != nil {
		return nil
	}
	g.mode = fi.Mode.Perm()
	return g
}

// restore puts the spec back as it was armed and reports whether it had
// changed (content, mode, or no longer a regular file); err says what
// could not be put back.
func (g *TaskSpec) restore() (bool, error) {
	if g == nil {
		return false, nil
	}
	fi, err := g.root.Lstat(g.rel)
	if err == nil && fi.Mode.IsRegular() && fi.Mode.Perm() == g.mode {
		if cur, err := g.root.ReadFile(g.rel, int64(len(g.data))); err == nil && bytes.Equal(cur, g.data) {
			return false, nil
		}
	}
	return true, g.root.WriteFile(g.rel, g.data, g.mode)
}

// Check reports a changed task spec and puts it back.
func (g *TaskSpec) Check() (event.GateFailed, bool) {
	changed, err := g.restore()
	if !changed {
		return event.GateFailed{}, false
	}
	back := "the runner put it back"
	if err != nil {
		back = fmt.Sprintf("the runner could not put it back (%v): restore it yourself", err)
	}
	paths := append([]string{g.rel}, g.root.Replaced()...)
	return event.GateFailed{Gate: event.GateTaskSpec, Paths: paths, Message: fmt.Sprintf(
		"the task spec this run runs under, %s, changed during the run (an edit or a command: its permissions, limits "+
			"and checks decide the next run on this tree); %s and nothing is published. "+
			"Keep the spec outside the work tree or under a path the edit rules deny (\".github/**\": deny)", g.rel, back)}, true
}
