package bashcheck

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// redirect checks an output redirection as an edit of its target, and the
// file of an input redirection like a path argument. `>&WORD`
// and `n>&WORD` duplicate a descriptor only when WORD is a descriptor
// number or '-'; any other word, quoted or expanded, names a file.
func (a *analyzer) redirect(r *syntax.Redirect) {
	if r.Op == syntax.RdrIn { // < file reads it: a path like an argument
		alts, _ := a.expandWord(r.Word)
		a.pathArgs("<", alts, append([]word{litWord("<")}, alts...))
		return
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob,
		syntax.AppClob, syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut, syntax.DplOut:
	default:
		return
	}
	alts, why := a.expandWord(r.Word)
	if why != "" {
		a.unjudgeable(nodeText(r), why)
		return
	}
	for _, w := range alts {
		if r.Op == syntax.DplOut && w.static() && isFD(w.lit()) {
			continue
		}
		a.edit(permission.KindRedirect, w)
	}
}

// edit records a write of the file named by w, decided by placeEdits;
// kind is KindRedirect for a redirection target, KindWrite for a file
// operand a program writes (a tee or rm operand).
func (a *analyzer) edit(kind string, w word) {
	if !w.static() {
		a.add(kind, w.text, permission.DefaultDeny(permission.Edit, w.text, "the file written is not static (it is only known at run time)"))
		return
	}
	target := w.lit()
	if safeSink(target) {
		return
	}
	if processFile(target) {
		a.add(kind, target, permission.DefaultDeny(permission.Edit, target,
			target+" names a file of the running process, which the check cannot see; write to a path in the work tree"))
		return
	}
	a.edits = append(a.edits, pendingEdit{check: len(a.checks), target: target, linkable: a.linkable, dirs: a.dirs})
	a.add(kind, target, permission.DefaultDeny(permission.Edit, target, "not decided yet"))
}

// placeEdits decides the recorded file writes once the whole command is
// known. A relative name is placed in every directory its command may
// run in (`cd src && touch x` writes src/x); after a cd to a directory
// only known at run time it cannot be placed and is denied.
func (a *analyzer) placeEdits() {
	for _, e := range a.edits {
		var d permission.Decision
		switch {
		case a.pathsErr != nil:
			d = permission.DefaultDeny(permission.Edit, e.target, a.pathsErr.Error())
		case !filepath.IsAbs(e.target) && e.dirs[unknownDir]:
			d = permission.DefaultDeny(permission.Edit, e.target,
				"the command changes to "+unplacedDir+", so a relative file name cannot be placed; use an absolute path")
		case !filepath.IsAbs(e.target) && e.linkable && a.movedFromRoot(e.dirs):
			d = permission.DefaultDeny(permission.Edit, e.target, "the command changes directory after a command that may "+
				"create a symlink, so a relative file name cannot be placed; use an absolute path")
		default:
			for _, abs := range a.placed(e) {
				d, _ = a.paths.Check(a.rs, permission.Edit, abs)
				if d.Allowed && e.linkable && newThrough(abs) != "" {
					d = permission.DefaultDeny(permission.Edit, e.target, fmt.Sprintf("%s passes through %s, which does not exist yet: "+
						"a command before it in this line may create it as a symlink to anywhere", e.target, newThrough(abs)))
				}
				if !d.Allowed {
					break
				}
			}
		}
		a.checks[e.check].Decision = d
	}
}

// movedFromRoot reports a directory other than the work tree's root in
// dirs: a cd came before the write.
func (a *analyzer) movedFromRoot(dirs dirSet) bool {
	for d := range dirs {
		if d != a.paths.Root() {
			return true
		}
	}
	return false
}

// placed is a write's target as absolute paths: itself when absolute,
// else joined to each directory its command may run in (the work tree's
// root when no cd came before it).
func (a *analyzer) placed(e pendingEdit) []string {
	if filepath.IsAbs(e.target) {
		return []string{e.target}
	}
	if len(e.dirs) == 0 {
		return []string{filepath.Join(a.paths.Root(), e.target)}
	}
	var out []string
	for _, dir := range e.dirs.sorted() {
		out = append(out, permission.JoinRaw(dir, e.target))
	}
	return out
}

// isFD reports a file-descriptor operand of >& ("2", "-", "3-").
func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// safeSink reports redirection targets that write no file.
func safeSink(target string) bool {
	switch target {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}
