package bashcheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// A path is judged by what is on disk when the check runs, but a command
// of the same line may first create a symlink that a later word reads or
// writes through: `git apply p.diff && cat l/passwd`, where the patch makes
// l a link to /etc. When any command of the line may create a symlink
// (mayLink), a path that passes through a directory that does not exist
// yet is denied. A directory that exists and is replaced by a link is not
// seen; the OS sandbox contains that case.

// noLinkPrograms create no symlink whatever their operands (they read, or
// write regular files and directories).
var noLinkPrograms = map[string]bool{
	"cat": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "head": true, "tail": true, "wc": true,
	"ls": true, "sort": true, "uniq": true, "cut": true, "tr": true, "diff": true, "cmp": true, "comm": true,
	"echo": true, "printf": true, "true": true, "false": true, "test": true, "[": true, "cd": true, "pushd": true,
	"popd": true, "pwd": true, "dirs": true, "mkdir": true, "touch": true, "basename": true, "dirname": true,
	"realpath": true, "readlink": true, "stat": true, "file": true, "du": true, "df": true, "date": true,
	"sleep": true, "which": true, "type": true, "sed": true, "awk": true, "gawk": true, "mawk": true, "tee": true,
	"jq": true, "gofmt": true, "rm": true, "rmdir": true, "chmod": true, "export": true, "set": true,
	"unset": true, "shift": true, "read": true, "exit": true, "return": true, "nl": true, "od": true,
	"xxd": true, "base64": true, "sha256sum": true, "md5sum": true, "paste": true, "column": true, "tree": true,
}

// noLinkSubcommands are the subcommands of git and go that create no
// symlink in the work tree (git checkout, apply, merge… and go test, run,
// generate, which run the project's code, may).
var noLinkSubcommands = map[string]bool{
	"git status": true, "git diff": true, "git log": true, "git show": true, "git branch": true,
	"git rev-parse": true, "git ls-files": true, "git blame": true, "git grep": true, "git describe": true,
	"git shortlog": true, "git cat-file": true, "git add": true, "git commit": true, "git tag": true,
	"git fetch": true, "git remote": true, "git config": true, "git --no-pager": true,
	"go build": true, "go vet": true, "go list": true, "go doc": true, "go version": true, "go env": true,
	"go fmt": true, "go mod": true,
}

// linkFacts says which commands of a script run after one that may create
// a symlink: a command outside noLinkPrograms and noLinkSubcommands, find
// with -exec or -ok, or a program name only known at run time.
type linkFacts struct {
	creators []syntax.Node // in source order
	loops    []syntax.Node // loops holding a creator: every command in them may follow it
}

func collectLinks(f *syntax.File) linkFacts {
	var lf linkFacts
	var stack []syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		args := []word{convertWord(ce.Args[0])}
		if args[0].static() && (path.Base(args[0].lit()) == "git" || path.Base(args[0].lit()) == "go" || path.Base(args[0].lit()) == "find") {
			for _, w := range ce.Args[1:] { // only these look past the program name
				args = append(args, convertWord(w))
			}
		}
		if commandMayLink(args) {
			lf.creators = append(lf.creators, ce)
			for _, s := range stack {
				switch s.(type) {
				case *syntax.ForClause, *syntax.WhileClause:
					lf.loops = append(lf.loops, s)
				}
			}
		}
		return true
	})
	return lf
}

// after reports whether n may run after a command that may create a link.
func (lf linkFacts) after(n syntax.Node) bool {
	for _, c := range lf.creators {
		if c.End().Offset() <= n.Pos().Offset() {
			return true
		}
	}
	for _, l := range lf.loops {
		if l.Pos().Offset() <= n.Pos().Offset() && n.End().Offset() <= l.End().Offset() {
			return true
		}
	}
	return false
}

func commandMayLink(args []word) bool {
	if !args[0].static() {
		return true
	}
	base := path.Base(args[0].lit())
	switch base {
	case "git", "go":
		for _, a := range args[1:] {
			if l := a.lit(); a.static() && !strings.HasPrefix(l, "-") || l == "--no-pager" {
				return !noLinkSubcommands[base+" "+l]
			}
		}
		return base == "go"
	case "find":
		for _, a := range args[1:] {
			if l := a.lit(); !a.static() || strings.HasPrefix(l, "-exec") || strings.HasPrefix(l, "-ok") {
				return true
			}
		}
		return false
	}
	return !noLinkPrograms[base]
}

// newThrough names the first directory on the way to abs (absolute) that
// does not exist yet, "" when every one does.
func newThrough(abs string) string {
	dir := filepath.Dir(filepath.Clean(abs))
	var missing string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err != nil {
			missing = d
		} else {
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return missing
}

// linkThrough denies a path that passes through a directory a command of
// the line may create as a symlink first; true when it did.
func (a *analyzer) linkThrough(subject, abs string) bool {
	if !a.linkable {
		return false
	}
	missing := newThrough(abs)
	if missing == "" {
		return false
	}
	rel := missing
	if t, err := a.paths.Resolve(missing); err == nil && t.Inside {
		rel = t.Rel
	}
	a.addPath(subject, rel, permission.DefaultDeny(permission.ExternalDirectory, rel, fmt.Sprintf(
		"%s passes through %s, which does not exist yet: a command before it in this line may create it as a symlink "+
			"to anywhere; create it in one command and use it in the next", subject, rel)))
	return true
}
