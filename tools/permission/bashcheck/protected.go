package bashcheck

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// holeMark stands for a hole while a dynamic word is handled as a string
// (a private-use rune no path check looks for).
const holeMark = '\U0010FFFD'

// protectedTarget records the protection check of a resolved path inside
// the work tree that is a .git directory or an .env* file: the same rule
// the read tool gets (paths.go), since an argument may be read.
func (a *analyzer) protectedTarget(subject string, t permission.Target) {
	if permission.RunnerState(t.Rel) {
		a.addPath(subject, t.Rel, permission.DefaultDeny(permission.Read, t.Rel, permission.RunnerStateWhy(t.Rel)))
		return
	}
	what := permission.ProtectedKind(t.Rel)
	if what == "" {
		return
	}
	d := a.rs.CheckProtected(permission.Read, t.Rel, what)
	if subject != t.Rel {
		d.Reason = fmt.Sprintf("%s resolves to %s: %s", subject, t.Rel, d.Reason)
	}
	a.addPath(subject, t.Rel, d)
}

// protectedName checks a relative name that cannot be placed (after a cd
// to a directory only known at run time) by what it says: "../.env" may
// be the work tree's .env.
func (a *analyzer) protectedName(subject, name string) {
	rel := path.Clean(filepath.ToSlash(name))
	if what := permission.ProtectedKind(rel); what != "" {
		d := a.rs.CheckProtected(permission.Read, rel, what)
		d.Reason = fmt.Sprintf("%s may name %s in the work tree: %s", subject, rel, d.Reason)
		a.addPath(subject, rel, d)
	}
}

// protectedGlob checks a dynamic argument word that may expand to a
// protected path: a component that starts with a literal character and
// could be .git (anywhere) or an .env* file (last), e.g. `.env*`, `.e*`,
// `.[e]nv`, `.*`, `.g?t/config`, `*/.env`. A component that starts with an
// expansion (`*`, `*.go`, `$F.env`) is not judged: bash's globs skip
// dotfiles, and a variable's value is only known at run time. Brace and extended globs ({.env,x}, @(.env)) and substitutions
// whose text names .env or .git are judged by their text.
func (a *analyzer) protectedGlob(w word) {
	if w.static() {
		return
	}
	if strings.ContainsAny(w.text, "{(") {
		if what := mentionsProtected(w.text); what != "" {
			a.addPath(w.text, w.text, a.globDecision(w.text, w.text, what))
			return
		}
		if extglobDot(w.text) {
			// *(.)env is .env: a group with an alternative that starts
			// with '.' matches dotfiles, whatever follows it
			what := mentionsProtected(strings.NewReplacer("(", "", ")", "", "|", "").Replace(w.text))
			if what == "" {
				what = ".env"
			}
			a.addPath(w.text, w.text, a.globDecision(w.text, w.text, what))
			return
		}
	}
	s := markHoles(w.pathRunes())
	value, _, tilde, ok := pathValue(s, s)
	if !ok {
		return
	}
	parts := []string{value}
	if tilde {
		parts = strings.Split(value, ":")
	}
	for _, v := range parts {
		if v == "" || strings.HasPrefix(v, "~") || tilde && !filepath.IsAbs(v) {
			continue
		}
		a.protectedGlobValue(w.text, v)
	}
}

// protectedGlobValue places a dynamic path value in each directory the
// command may run in and checks what it may expand to.
func (a *analyzer) protectedGlobValue(subject, value string) {
	if a.pathsErr != nil {
		return
	}
	dirs := []string{a.paths.Root()}
	if !filepath.IsAbs(value) && len(a.dirs) > 0 {
		dirs = a.dirs.sorted()
	}
	for _, dir := range dirs {
		rel, ok := a.globRel(dir, value)
		if !ok {
			continue
		}
		if what := globProtected(rel); what != "" {
			pat := strings.ReplaceAll(rel, string(holeMark), "*")
			a.addPath(subject, pat, a.globDecision(subject, pat, what))
		}
	}
}

// globRel is value placed in dir, relative to the work tree, with its
// static directory part's symlinks resolved; false when it lies outside
// (external_directory judges it). In a directory only known at run time
// the value is taken as written.
func (a *analyzer) globRel(dir, value string) (string, bool) {
	first := strings.IndexRune(value, holeMark)
	if first < 0 {
		first = len(value)
	}
	cut := strings.LastIndexByte(value[:first], '/') + 1
	dirPart, rest := value[:cut], value[cut:]
	if dir == unknownDir && !filepath.IsAbs(value) {
		return value, true
	}
	name := dirPart
	if !filepath.IsAbs(name) {
		name = permission.JoinRaw(dir, dirPart)
	}
	if name == "" {
		name = "/"
	}
	t, err := a.paths.Resolve(name)
	if err != nil || !t.Inside {
		return "", false
	}
	if t.Rel == "." {
		return rest, true
	}
	return t.Rel + "/" + rest, true
}

// globProtected names the protected element a work-tree-relative path with
// holes may expand to: ".git" when a component could be .git, ".env" when
// the last could be an .env* file, "" otherwise. Case is ignored.
func globProtected(rel string) string {
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		rs := []rune(strings.ToLower(c))
		for j, r := range rs {
			if r == holeMark {
				rs[j] = permission.Hole
			}
		}
		if len(rs) == 0 || rs[0] == permission.Hole {
			continue // `*`, `*.go`, `$F`: a glob skips dotfiles, a variable is not judged
		}
		if permission.MatchSome(".git", rs) {
			return ".git"
		}
		if i == len(comps)-1 && permission.MatchSome(".env*", rs) {
			return ".env"
		}
	}
	return ""
}

// globDecision decides a read through a glob (pattern: holes as '*') that
// may reach what: an allow rule must name what and match the glob for any
// expansion (tried with '*' as nothing, as itself and as a name); a deny
// rule matching one of those, or a path the glob matches, denies.
func (a *analyzer) globDecision(subject, pat, what string) permission.Decision {
	variants := []string{strings.ReplaceAll(pat, "*", ""), pat, strings.ReplaceAll(pat, "*", "\x01x")}
	allow := func(r permission.Rule) bool {
		if !permission.NamesProtected(r.Pattern, what) {
			return false
		}
		for _, v := range variants {
			if !permission.MatchPath(r.Pattern, v) {
				return false
			}
		}
		return true
	}
	deny := func(r permission.Rule) bool {
		for _, v := range variants {
			if permission.MatchPath(r.Pattern, v) {
				return true
			}
		}
		return permission.MatchPath(pat, r.Pattern)
	}
	d := a.rs.Decide(permission.Read, pat, allow, deny)
	if d.Rule == nil {
		d.Reason = fmt.Sprintf("%s may expand to a protected path (%s): only a rule for read that names %s "+
			"explicitly and covers every expansion can allow it; write the file name out", subject, permission.ProtectedWhy(what), what)
	}
	return d
}

// mentionsProtected reports the protected element a word's written text
// names, for expansions the check cannot take apart.
func mentionsProtected(text string) string {
	l := strings.ToLower(text)
	switch {
	case strings.Contains(l, ".git"):
		return ".git"
	case strings.Contains(l, ".env"):
		return ".env"
	}
	return ""
}

// extglobDot reports an extended glob group (?(…) *(…) +(…) @(…) !(…))
// with an alternative that starts with '.', which lets the group match
// the leading dot of a dotfile.
func extglobDot(text string) bool {
	for i := 1; i < len(text); i++ {
		if text[i] != '(' || !strings.ContainsRune("?*+@!", rune(text[i-1])) {
			continue
		}
		depth, start := 0, i+1
		for j := i; j < len(text); j++ {
			switch text[j] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 1 && (text[j] == '|' || text[j] == '(') && j > i || depth == 0 {
				if strings.HasPrefix(text[start:j], ".") {
					return true
				}
				start = j + 1
			}
			if depth == 0 {
				break
			}
		}
	}
	return false
}

// markHoles renders runes with holes as a string, holes as holeMark.
func markHoles(rs []rune) string {
	var b strings.Builder
	for _, r := range rs {
		if r == permission.Hole {
			r = holeMark
		}
		b.WriteRune(r)
	}
	return b.String()
}

// excludeOperand reports an argument that names a path to leave out, not
// one to read: the value of --exclude, --exclude-dir, --ignore and
// --ignore-dir (tar, rsync, grep, ripgrep-like tools), and find's
// -name/-path/… pattern after -not or '!' or before -prune, as in
// `find . -path ./.git -prune` and `find . -not -path './.git/*'`.
func excludeOperand(prog string, ws []word, i int) bool {
	lit := func(j int) string {
		if j < 0 || j >= len(ws) || !ws[j].static() {
			return ""
		}
		return ws[j].lit()
	}
	if opt, _, ok := strings.Cut(string(ws[i].pathRunes()), "="); ok && excludeOption(opt) {
		return true
	}
	if excludeOption(lit(i - 1)) {
		return true
	}
	if path.Base(prog) != "find" {
		return false
	}
	switch lit(i - 1) {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex":
		neg := lit(i-2) == "-not" || lit(i-2) == "!"
		return neg || lit(i+1) == "-prune"
	}
	return false
}

func excludeOption(opt string) bool {
	switch opt {
	case "--exclude", "--exclude-dir", "--ignore", "--ignore-dir":
		return true
	}
	return false
}
