package bashcheck

import (
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// cdInside reports a cd or pushd (no path, no rule needed) to a static
// directory inside the work tree and outside .git, resolved from each
// directory the command may run in (dirFlow), and popd with no operand, which returns to a directory an
// earlier pushd of the same command entered. Changing directory runs no
// program; relative file writes after it are refused (placeEdits), and a
// bare repository there is not discovered (the bash tool's
// safe.bareRepository=explicit).
func (a *analyzer) cdInside(args []word) (string, bool) {
	if a.pathsErr != nil || !args[0].static() {
		return "", false
	}
	prog := args[0].lit()
	ops := args[1:]
	for len(ops) > 0 && ops[0].static() && strings.HasPrefix(ops[0].lit(), "-") && ops[0].lit() != "-" {
		done := ops[0].lit() == "--"
		ops = ops[1:]
		if done {
			break
		}
	}
	switch {
	case prog == "popd" && len(args) == 1:
		return "the directory before the matching pushd", true
	case prog == "cd" && len(ops) == 1 && ops[0].static() && ops[0].lit() == "-":
		return a.cdBackInside()
	case prog != "cd" && prog != "pushd", len(ops) != 1, !ops[0].static(), ops[0].lit() == "-":
		return "", false
	}
	dirs := a.dirs
	if len(dirs) == 0 {
		dirs = dirSet{a.paths.Root(): true}
	}
	// the operand is resolved from every directory the cd may run in
	// (`cd src && … && cd ..` returns to the root)
	var landed []string
	for _, dir := range dirs.sorted() {
		if dir == unknownDir && !filepath.IsAbs(ops[0].lit()) {
			return "", false
		}
		name := ops[0].lit()
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		t, err := a.paths.Resolve(name)
		if err != nil || !t.Inside || permission.ProtectedKind(t.Rel) == ".git" {
			return "", false
		}
		landed = append(landed, t.Rel)
	}
	return strings.Join(landed, " or "), true
}

// cdBackInside reports a `cd -` whose every possible $OLDPWD (a
// directory an earlier cd of the line left) is inside the work tree and
// outside .git.
func (a *analyzer) cdBackInside() (string, bool) {
	if len(a.dashTo) == 0 || a.dashTo[unknownDir] {
		return "", false
	}
	var back []string
	for _, dir := range a.dashTo.sorted() {
		t, err := a.paths.Resolve(dir)
		if err != nil || !t.Inside || permission.ProtectedKind(t.Rel) == ".git" {
			return "", false
		}
		back = append(back, t.Rel)
	}
	return strings.Join(back, " or "), true
}

// processFile reports paths whose meaning depends on the process that
// opens them (/proc/self/cwd, /dev/fd/3): bash, not the check, opens them.
func processFile(target string) bool {
	c := filepath.Clean(target)
	return strings.HasPrefix(c, "/proc/") || strings.HasPrefix(c, "/dev/fd/")
}
