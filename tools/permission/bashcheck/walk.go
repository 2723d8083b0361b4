package bashcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// Programs that walk the directories they are given (grep -r, rg, diff -r,
// tar -c, zip -r, cp -r, rsync -r) read the .env* files and .git
// directories below them without naming them. Where the OS sandbox hides
// protected files (Options.ProtectedHidden) that is harmless; elsewhere
// (sandbox mode off, macOS) the walk is judged on the tree as it is: a
// protected entry it reaches is a read of it, unless the command's own
// exclusions leave it out.

// maxWalkEntries bounds the entries one walk looks at; a larger tree is
// denied as too large to judge.
const maxWalkEntries = 200_000

// walkSpec is what a walking command was given.
type walkSpec struct {
	dirs     []word   // the operands that may be directories
	excludes []string // globs of base names it leaves out (--exclude, rg -g '!x')
	// excludeDirs are globs of directory names it leaves out (grep's
	// --exclude-dir; grep's --exclude leaves out files only)
	excludeDirs []string
	includes    []string // globs of the only file names it reads (grep --include, rg -g x)
	hidden      bool     // it reads hidden files (rg skips them unless --hidden)
	follow      bool     // it follows symlinks it meets
	grep        bool     // grep's --exclude leaves out files, not directories
}

// walkOf returns what a command walks; ok is false for one that walks
// nothing.
func walkOf(args []word) (walkSpec, bool) {
	if len(args) < 2 || !args[0].static() {
		return walkSpec{}, false
	}
	switch base := path.Base(args[0].lit()); base {
	case "grep", "egrep", "fgrep":
		return grepWalk(args)
	case "rg":
		return rgWalk(args)
	case "diff", "cp", "zip", "rsync", "tar", "scp":
		return genericWalk(base, args)
	case "git":
		return gitNoIndexWalk(args)
	}
	return walkSpec{}, false
}

// gitNoIndexWalk: git diff --no-index DIR1 DIR2 prints every file below
// the directories (a file only one side has, in full).
func gitNoIndexWalk(args []word) (walkSpec, bool) {
	sub := gitSubcommand(args)
	if sub < 0 || args[sub].lit() != "diff" {
		return walkSpec{}, false
	}
	var w walkSpec
	noIndex, optsDone := false, false
	for _, a := range args[sub+1:] {
		l := a.lit()
		switch {
		case a.static() && l == "--no-index":
			noIndex = true
		case a.static() && l == "--" && !optsDone:
			optsDone = true
		case optsDone || !a.static() || !strings.HasPrefix(l, "-"):
			w.dirs = append(w.dirs, a)
		}
	}
	if !noIndex || len(w.dirs) == 0 {
		return walkSpec{}, false
	}
	w.hidden = true
	return w, true
}

// grepWalk: -r, -R, --recursive, --dereference-recursive, -d recurse.
func grepWalk(args []word) (walkSpec, bool) {
	spec, _ := gnuSpecFor("grep")
	roles := gnuRoles(spec, args)
	var w walkSpec
	recursive := false
	for i, a := range args[1:] {
		l := a.lit()
		switch roles[i] {
		case roleOperand:
			w.dirs = append(w.dirs, a)
		case roleExclude:
			glob := globText(a)
			if _, v, ok := strings.Cut(glob, "="); ok && strings.HasPrefix(glob, "--") {
				glob = v
			}
			switch prev := args[i].lit(); {
			case strings.HasPrefix(l, "--include") || prev == "--include":
				w.includes = append(w.includes, glob)
			case strings.HasPrefix(l, "--exclude-dir") || prev == "--exclude-dir":
				w.excludeDirs = append(w.excludeDirs, glob)
			default:
				w.excludes = append(w.excludes, glob)
			}
		case roleOption:
			switch {
			case l == "--recursive" || l == "--directories=recurse" || l == "recurse" && args[i].lit() == "-d":
				recursive = true
			case l == "--dereference-recursive":
				recursive, w.follow = true, true
			case len(l) > 1 && l[0] == '-' && l[1] != '-':
				cluster := l[1:]
				if k := strings.IndexAny(cluster, "ABCDdefm"); k >= 0 {
					cluster = cluster[:k]
				}
				recursive = recursive || strings.ContainsAny(cluster, "rR")
				w.follow = w.follow || strings.Contains(cluster, "R")
			}
		}
	}
	if !recursive {
		return walkSpec{}, false
	}
	if len(w.dirs) == 0 {
		w.dirs = []word{litWord(".")}
	}
	w.hidden, w.grep = true, true
	return w, true
}

// rgWalk: ripgrep walks its operands (or .) and skips hidden entries
// unless --hidden, -. or -uu; -g/--glob '!x' excludes, -g x includes.
func rgWalk(args []word) (walkSpec, bool) { //nolint:gocyclo // one case per ripgrep flag that changes the walk
	var w walkSpec
	optsDone := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		l := a.lit()
		value := func() string {
			if _, v, ok := strings.Cut(globText(a), "="); ok {
				return v
			}
			if i+1 < len(args) {
				i++
				return globText(args[i])
			}
			return ""
		}
		switch {
		case optsDone || !strings.HasPrefix(l, "-") || l == "-":
			w.dirs = append(w.dirs, a)
		case l == "--":
			optsDone = true
		case l == "--hidden" || l == "-." || strings.Contains(l, "uu") && !strings.HasPrefix(l, "--"):
			w.hidden = true
		case l == "--follow" || l == "-L":
			w.follow = true
		case l == "-g" || l == "--glob" || l == "--iglob" || strings.HasPrefix(l, "--glob=") || strings.HasPrefix(l, "--iglob="):
			if g := value(); strings.HasPrefix(g, "!") { // rg's own glob syntax: '!' negates
				w.excludes = append(w.excludes, g[1:])
			} else {
				w.includes = append(w.includes, g)
			}
		case l == "-e" || l == "--regexp" || l == "-f" || l == "--file" || l == "-t" || l == "-T" || l == "--type" ||
			l == "--type-not" || l == "-m" || l == "-A" || l == "-B" || l == "-C" || l == "-r" || l == "--replace" || l == "-j" || l == "-M":
			value()
		}
	}
	if len(w.dirs) > 0 && !hasPatternOption(args) {
		w.dirs = w.dirs[1:] // the first operand is the pattern
	}
	if len(w.dirs) == 0 {
		w.dirs = []word{litWord(".")}
	}
	return w, true
}

func hasPatternOption(args []word) bool {
	for _, a := range args[1:] {
		if l := a.lit(); l == "-e" || l == "-f" || strings.HasPrefix(l, "--regexp") || strings.HasPrefix(l, "--file") {
			return true
		}
	}
	return false
}

// genericWalk: diff -r, cp -r/-R/-a, zip -r, rsync -r/-a, scp -r, tar
// -c (tar's operands are walked whenever it creates an archive). Every
// operand that is not an option may be a directory walked; --exclude GLOB
// leaves names out; tar's -C DIR places the operands after it.
func genericWalk(base string, args []word) (walkSpec, bool) { //nolint:gocyclo // one case per walking flag of diff, cp, zip, rsync, scp and tar
	var w walkSpec
	recursive, chdir := false, ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		l := a.lit()
		next := func() word {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return litWord("")
		}
		switch {
		case base == "tar" && i == 1 && a.static() && !strings.HasPrefix(l, "-"):
			recursive = strings.Contains(l, "c") // old-style options: tar czf out.tgz src
			w.follow = strings.Contains(l, "h")
		case !a.static() || !strings.HasPrefix(l, "-") || l == "-":
			if chdir != "" && a.static() && !filepath.IsAbs(l) {
				a = litWord(path.Join(chdir, l))
			}
			w.dirs = append(w.dirs, a)
		case l == "--exclude" || l == "--exclude-dir":
			w.excludes = append(w.excludes, globText(next()))
		case strings.HasPrefix(l, "--exclude=") || strings.HasPrefix(l, "--exclude-dir="):
			_, g, _ := strings.Cut(globText(a), "=")
			w.excludes = append(w.excludes, g)
		case base == "tar" && (l == "-C" || l == "--directory"):
			chdir = next().lit()
		case base == "tar" && strings.HasPrefix(l, "--directory="):
			chdir = strings.TrimPrefix(l, "--directory=")
		case l == "--recursive" || l == "--archive" || l == "--create":
			recursive = true
		case l == "-L" || l == "--dereference" || l == "--copy-links":
			w.follow = true
		case !strings.HasPrefix(l, "--"):
			cluster := l[1:]
			if base == "tar" {
				recursive = recursive || strings.Contains(cluster, "c")
				w.follow = w.follow || strings.Contains(cluster, "h")
				if k := strings.IndexAny(cluster, "fCTX"); k >= 0 && k == len(cluster)-1 {
					if v := next(); cluster[k] == 'C' {
						chdir = v.lit()
					}
				}
				continue
			}
			recursive = recursive || strings.ContainsAny(cluster, "rRa")
			w.follow = w.follow || strings.Contains(cluster, "L")
		}
	}
	w.follow = w.follow || base == "diff"
	w.hidden = true
	return w, recursive
}

// globText is a word's text as a glob: holes (unquoted * and ?) as '*'.
func globText(w word) string {
	rs := make([]rune, len(w.runes))
	for i, r := range w.runes {
		if r == permission.Hole {
			r = '*'
		}
		rs[i] = r
	}
	return string(rs)
}

// walkReads judges what a walking command reads below its directory
// operands: the first protected entry it reaches, and a symlink it follows
// out of the work tree.
func (a *analyzer) walkReads(args []word) {
	if a.hidden || a.pathsErr != nil {
		return
	}
	spec, ok := walkOf(args)
	if !ok {
		return
	}
	dirs := a.dirs
	if len(dirs) == 0 {
		dirs = dirSet{a.paths.Root(): true}
	}
	for _, op := range spec.dirs {
		for _, pw := range pathsOf(op) {
			if pw.home {
				continue // judged as a path outside already
			}
			for _, dir := range dirs.sorted() {
				name := pw.name
				if !filepath.IsAbs(name) {
					if dir == unknownDir {
						continue
					}
					name = permission.JoinRaw(dir, name)
				}
				a.walkDir(op.text, args[0].lit(), name, spec)
			}
		}
	}
}

// walkDir walks one directory operand the way the program would.
func (a *analyzer) walkDir(subject, prog, name string, spec walkSpec) {
	t, err := a.paths.Resolve(name)
	if err != nil || !t.Inside {
		return // outside: external_directory judged the operand
	}
	if fi, err := os.Stat(t.Abs); err != nil || !fi.IsDir() {
		return
	}
	seen := 0
	errStop := errors.New("stop")
	_ = filepath.WalkDir(t.Abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an unreadable directory is not read
		}
		if seen++; seen > maxWalkEntries {
			a.addPath(subject, t.Rel, permission.DefaultDeny(permission.Read, t.Rel, fmt.Sprintf(
				"%s walks %s, more than %d entries, too many to look for protected files in; name the directories to read", prog, t.Rel, maxWalkEntries)))
			return errStop
		}
		if p == t.Abs {
			return nil
		}
		base := d.Name()
		if spec.skips(base, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && spec.follow {
			a.followedLink(subject, prog, p)
			return nil
		}
		rel, ok := a.relOf(p)
		if !ok {
			return nil
		}
		what := permission.ProtectedKind(rel)
		if what == "" || !d.IsDir() && len(spec.includes) > 0 && !excludedName(base, spec.includes) {
			return nil
		}
		if dec := a.rs.CheckProtected(permission.Read, rel, what); !dec.Allowed {
			dec.Reason = fmt.Sprintf("%s walks %s and reads %s: %s. Leave it out (grep --exclude-dir=.git --exclude='.env*', "+
				"rg without --hidden) or name the directories to read; the OS sandbox, which hides .env* files, is off here",
				prog, subject, rel, dec.Reason)
			a.addPath(subject, rel, dec)
			return errStop
		}
		if d.IsDir() {
			return filepath.SkipDir // allowed by a rule: nothing below needs looking at
		}
		return nil
	})
}

// followedLink judges a symlink a walk follows: out of the work tree it
// is a read outside.
func (a *analyzer) followedLink(subject, prog, p string) {
	t, err := a.paths.Resolve(p)
	if err != nil || t.Inside {
		return
	}
	pat := t.Pattern()
	d := a.rs.Evaluate(permission.ExternalDirectory, pat)
	d.Reason = fmt.Sprintf("%s walks %s and follows a symlink to %s, outside the work tree: %s", prog, subject, pat, d.Reason)
	a.addPath(subject, pat, d)
}

// relOf is the work-tree-relative slash path of p, an absolute path
// below the root with no symlink on the way.
func (a *analyzer) relOf(p string) (string, bool) {
	rel, err := filepath.Rel(a.paths.Root(), p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// skips reports whether the walk leaves the entry base out.
func (w walkSpec) skips(base string, dir bool) bool {
	if !w.hidden && strings.HasPrefix(base, ".") || excludedName(base, w.excludes) && !(dir && w.grep) {
		return true
	}
	return dir && excludedName(base, w.excludeDirs)
}

// excludedName reports whether base matches one of globs.
func excludedName(base string, globs []string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}
