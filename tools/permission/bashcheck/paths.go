package bashcheck

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// pathWord is a path an argument word may name.
type pathWord struct {
	name string // absolute, relative, or "~…" for the home directory
	home bool   // in the home directory ($HOME or ~ at run time)
}

// dirsAt returns the directories node n may run in (the work tree's root
// when the flow did not reach it).
func (a *analyzer) dirsAt(n syntax.Node) dirSet {
	return a.at[n]
}

// pathArgs checks the argument words of prog (the command cmd) that name
// paths outside the work tree against external_directory, and those inside
// against the protection of .git and .env*. A word whose value is only
// known at run time could name any path: it is denied unless the rule
// author opts in with dynamic_args (unknownArg). Globs are expanded in the
// work tree as bash would (expandGlob), so that a match through a symlink
// pointing out is seen. echo and printf only print their operands; a bare
// cd goes to $HOME.
func (a *analyzer) pathArgs(prog string, ws, cmd []word) {
	switch path.Base(prog) {
	case "echo", "printf":
		return
	case "cd":
		if len(cdOperands(ws)) == 0 {
			a.pathWord("cd", pathWord{name: "~", home: true}, false)
		}
	}
	// a program whose option grammar is known: only its file operands
	// and file-valued options are paths (grep's pattern is not)
	var excluded []bool
	if keep, ex, ok := gnuOwnWords(prog, append([]word{litWord(prog)}, ws...)); ok {
		ws, excluded = keep, ex
	}
	var optIn *permission.Decision // dynamic_args' decision on cmd, made once
	for i, w := range ws {
		before := len(a.checks)
		protect := !excludeOperand(prog, ws, i)
		if excluded != nil {
			protect = !excluded[i]
		}
		if w.unknown != "" && protect && !noFileOperands(path.Base(prog)) {
			if optIn == nil {
				d := a.dynamicArgs(cmd)
				optIn = &d
			}
			a.unknownArg(w, cmd, *optIn)
		}
		for _, pw := range pathsOf(w) {
			a.pathWord(w.text, pw, protect)
		}
		if protect {
			a.protectedGlob(w)
			a.expandGlob(w)
		}
		a.explainVia(w, before)
	}
}

// explainVia prefixes the denials recorded for w since check index from
// with how bash made the word ("brace expansion of {.e,}nv produces .env: …").
func (a *analyzer) explainVia(w word, from int) {
	if w.via == "" {
		return
	}
	for i := from; i < len(a.checks); i++ {
		if d := &a.checks[i].Decision; !d.Allowed {
			d.Reason = fmt.Sprintf("%s produces %s: %s", w.via, strconv.Quote(w.text), d.Reason)
		}
	}
}

// noFileOperands are commands whose operands are never opened as files:
// an argument only known at run time names nothing for them.
func noFileOperands(base string) bool {
	switch base {
	case "echo", "printf", "test", "[", "true", "false", ":", "exit", "return", "shift", "wait", "kill",
		"sleep", "set", "cd", "pushd", "popd", "basename", "dirname", "expr", "seq", "unset", "type", "which":
		return true
	}
	return false
}

// unknownArg decides an argument whose value is only known at run time
// ($F, $(cmd), ${x:-/etc/passwd}, what xargs reads, find's {}): allowed
// only by a dynamic_args rule matching the command, as a bash rule does.
func (a *analyzer) unknownArg(w word, cmd []word, d permission.Decision) {
	if d.Rule == nil {
		d.Reason = fmt.Sprintf("the argument %s is only known at run time (%s), so which file it names cannot be judged; "+
			"to accept that, allow the command in dynamic_args: {%s: allow}", w.text, w.unknown, strconv.Quote(optInPattern(cmd)))
	}
	a.addPath(w.text, w.text, d)
}

// optInPattern suggests a dynamic_args pattern for a command: its program
// (with the subcommand of git, go and the like) and " *".
func optInPattern(cmd []word) string {
	if len(cmd) == 0 {
		return "*"
	}
	words := []string{cmd[0].text}
	switch path.Base(cmd[0].lit()) {
	case "git", "go", "npm", "npx", "cargo", "docker", "kubectl", "make":
		if len(cmd) > 1 && cmd[1].static() && !strings.HasPrefix(cmd[1].lit(), "-") {
			words = append(words, cmd[1].lit())
		}
	}
	return strings.Join(words, " ") + " *"
}

// dynamicArgs is the dynamic_args decision on the command cmd.
func (a *analyzer) dynamicArgs(cmd []word) permission.Decision {
	subject, text := joinWords(cmd)
	return a.rs.Decide(permission.DynamicArgs, text,
		func(r permission.Rule) bool { return permission.MatchAll(r.Pattern, subject) },
		func(r permission.Rule) bool { return permission.MatchSome(r.Pattern, subject) })
}

// maxGlobMatches bounds the paths one glob may match in the work tree.
const maxGlobMatches = 4096

// expandGlob matches a glob word against the work tree from each
// directory the command may run in, skipping dotfiles where bash does
// (a component not starting with '.'), and checks every match like a
// written path: one reached through an in-tree symlink that points out
// (`cat */secret.txt`) needs external_directory.
func (a *analyzer) expandGlob(w word) {
	if w.static() || w.opaque || w.unknown != "" || a.pathsErr != nil {
		return
	}
	var b strings.Builder
	for _, r := range w.pathRunes() {
		switch r {
		case permission.Hole:
			b.WriteByte('*')
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	pat := b.String()
	if strings.HasPrefix(pat, "-") || strings.Contains(pat, "=") {
		return
	}
	dirs := a.dirs
	if len(dirs) == 0 || filepath.IsAbs(pat) {
		dirs = dirSet{a.paths.Root(): true}
	}
	for _, dir := range dirs.sorted() {
		if dir == unknownDir {
			continue
		}
		full, ok := a.globBase(permission.JoinRaw(dir, pat))
		if !ok {
			a.addPath(w.text, w.text, permission.DefaultDeny(permission.Read, w.text, fmt.Sprintf(
				"the glob %s climbs with '..' after a wildcard, so where it lands cannot be judged; name the directory", w.text)))
			return
		}
		matches, err := filepath.Glob(full)
		if err != nil {
			continue
		}
		if len(matches) > maxGlobMatches {
			a.addPath(w.text, w.text, permission.DefaultDeny(permission.Read, w.text, fmt.Sprintf(
				"the glob %s matches more than %d paths, too many to judge; narrow it", w.text, maxGlobMatches)))
			return
		}
		for _, m := range matches {
			if skipsDotfile(full, m) {
				continue
			}
			a.resolvedPath(w.text, m, true)
		}
	}
}

// globBase places the ".." components of the glob full as the kernel
// does: the part up to the last ".." is resolved (link/../x climbs from
// the link's target, not back to where link is) and the rest is globbed
// there. ok is false when a wildcard comes before a "..".
func (a *analyzer) globBase(full string) (string, bool) {
	comps := strings.Split(filepath.ToSlash(full), "/")
	last := -1
	for i, c := range comps {
		if c == ".." {
			last = i
		}
	}
	if last < 0 {
		return filepath.Clean(full), true
	}
	for _, c := range comps[:last] {
		if strings.ContainsAny(c, "*?[\\") {
			return "", false
		}
	}
	t, err := a.paths.Resolve(strings.Join(comps[:last+1], "/"))
	if err != nil {
		return "", false
	}
	return filepath.Join(append([]string{t.Abs}, comps[last+1:]...)...), true
}

// skipsDotfile reports a match bash's glob would not produce: a component
// starting with '.' matched by a pattern component that does not.
func skipsDotfile(pattern, match string) bool {
	pc := strings.Split(filepath.ToSlash(pattern), "/")
	mc := strings.Split(filepath.ToSlash(match), "/")
	if len(pc) != len(mc) {
		return true
	}
	for i := range pc {
		if strings.HasPrefix(mc[i], ".") && !strings.HasPrefix(pc[i], ".") {
			return true
		}
	}
	return false
}

// pathWord records the external_directory check of one path, from every
// directory the command may run in; inside the work tree, when protect is
// set, a path to .git or an .env* file gets the read tool's protection.
func (a *analyzer) pathWord(subject string, pw pathWord, protect bool) {
	switch {
	case pw.home:
		if hasDotDot(pw.name) {
			a.addPath(subject, pw.name, permission.DefaultDeny(permission.ExternalDirectory, pw.name,
				pw.name+" climbs out of the home directory with '..', which cannot be placed"))
			return
		}
		d := a.rs.Evaluate(permission.ExternalDirectory, pw.name)
		d.Reason = fmt.Sprintf("%s is in the home directory, outside the work tree: %s", pw.name, d.Reason)
		a.addPath(subject, pw.name, d)
	case a.pathsErr != nil:
		if filepath.IsAbs(pw.name) || escapes(pw.name) {
			a.addPath(subject, pw.name, permission.DefaultDeny(permission.ExternalDirectory, pw.name, a.pathsErr.Error()))
		}
	case filepath.IsAbs(pw.name):
		a.resolvedPath(subject, pw.name, protect)
	default:
		dirs := a.dirs
		if len(dirs) == 0 {
			dirs = dirSet{a.paths.Root(): true}
		}
		for _, dir := range dirs.sorted() {
			if dir != unknownDir {
				a.resolvedPath(subject, permission.JoinRaw(dir, pw.name), protect)
				continue
			}
			if protect {
				a.protectedName(subject, pw.name)
			}
			if escapes(pw.name) {
				a.addPath(subject, pw.name, permission.DefaultDeny(permission.ExternalDirectory, pw.name, "the command changes to "+
					unplacedDir+", so "+strconv.Quote(pw.name)+" cannot be placed"))
			}
		}
	}
}

// resolvedPath checks the absolute path name after resolving symlinks.
func (a *analyzer) resolvedPath(subject, name string, protect bool) {
	if a.linkThrough(subject, name) {
		return
	}
	t, err := a.paths.Resolve(name)
	if err != nil {
		a.addPath(subject, name, permission.DefaultDeny(permission.ExternalDirectory, name, fmt.Sprintf("invalid path: %v", err)))
		return
	}
	if t.Inside {
		if protect {
			a.protectedTarget(subject, t)
		}
		return
	}
	pat := t.Pattern()
	d := a.rs.Evaluate(permission.ExternalDirectory, pat)
	d.Reason = fmt.Sprintf("%s is outside the work tree: %s", pat, d.Reason)
	a.addPath(subject, pat, d)
}

// addPath records a path check once per subject and pattern.
func (a *analyzer) addPath(subject, pattern string, d permission.Decision) {
	key := subject + "\x00" + pattern
	if a.pathSeen[key] {
		return
	}
	if a.pathSeen == nil {
		a.pathSeen = map[string]bool{}
	}
	a.pathSeen[key] = true
	a.add(permission.KindPath, subject, d)
}

// ownWords are a command's argument words less those it hands to the
// commands and scripts it runs: an inner program name is not a path
// argument, and the inner command's arguments are checked with it.
func ownWords(args []word, w wrapped) []word {
	drop := map[string]int{}
	for _, in := range w.inner {
		for _, iw := range in.assigns {
			drop[iw.text]++
		}
		for _, iw := range in.args {
			drop[iw.text]++
		}
	}
	for _, s := range w.scripts {
		drop[s.text]++
	}
	out := make([]word, 0, len(args))
	for _, a := range args[1:] {
		if drop[a.text] > 0 {
			drop[a.text]--
			continue
		}
		out = append(out, a)
	}
	return out
}

// pathsOf returns the paths an argument word may name outside the work
// tree's reach of a plain relative name: the word itself, the value of
// --name=VALUE and -name=VALUE, of -oVALUE when VALUE is absolute or
// starts with "..", and the absolute or ~ parts of NAME=VALUE (bash expands ~ there). A word with
// an expansion gives the directory of its static prefix (/tmp/* → /tmp);
// one starting with ~, $HOME or ${HOME} names the home directory; any other
// dynamic word names nothing the check can see.
func pathsOf(w word) []pathWord {
	prefix, dynamic := staticPrefix(w)
	if vs := attachedValues(prefix); vs != nil {
		out := make([]pathWord, 0, len(vs))
		for _, v := range vs {
			if dynamic {
				v = prefixDir(v)
			}
			if v != "" && !safeDevice(v) {
				out = append(out, pathWord{name: v})
			}
		}
		return out
	}
	value, valueText, tilde, ok := pathValue(prefix, w.text)
	if !ok {
		return nil
	}
	if dynamic && isHomeText(valueText) {
		return []pathWord{{name: homeName(valueText), home: true}}
	}
	var out []pathWord
	parts := []string{value}
	if tilde {
		parts = strings.Split(value, ":")
	}
	for i, v := range parts {
		if dynamic && i == len(parts)-1 {
			v = prefixDir(v)
		}
		switch {
		case v == "":
		case tilde && strings.HasPrefix(v, "~"):
			out = append(out, pathWord{name: homeName(v), home: true})
		case tilde && !filepath.IsAbs(v):
			// NAME=value: only absolute values are taken as paths, but a
			// protected one is one (dd if=.env, curl -F f=@.env)
			if p := strings.TrimPrefix(v, "@"); mentionsProtected(p) != "" {
				out = append(out, pathWord{name: p})
			}
		case safeDevice(v):
		default:
			out = append(out, pathWord{name: v})
			if p, ok := strings.CutPrefix(v, "@"); ok && mentionsProtected(p) != "" {
				out = append(out, pathWord{name: p}) // curl -d @.env: the file after '@'
			}
		}
	}
	return out
}

// attachedValues lists what a cluster of short options (-XVALUE) may
// carry attached as a file name, for every split of the cluster: which
// letters take an argument is only known per program (grep -f.env reads
// .env, sort -o/tmp/x writes /tmp/x). Only values that may leave the work
// tree or name a protected file are kept: absolute, "..", a '/' that may
// pass a symlink, or a mention of .env or .git. nil for other words.
func attachedValues(prefix string) []string {
	if len(prefix) < 3 || prefix[0] != '-' || prefix[1] == '-' || isOptionValue(prefix) {
		return nil
	}
	var out []string
	for k := 1; k < len(prefix)-1; k++ {
		c := prefix[k]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			break
		}
		v := prefix[k+1:]
		if len(v) > 1 && (strings.Contains(v, "/") || v == "..") || mentionsProtected(v) != "" {
			out = append(out, v)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// pathValue picks the part of a word that may be a path: the value of an
// option or assignment, else the word. tilde is set for NAME=VALUE, whose
// value bash splits at ':' and tilde-expands.
func pathValue(prefix, text string) (value, valueText string, tilde, ok bool) {
	switch {
	case isURL(prefix):
		return "", "", false, false
	case strings.HasPrefix(prefix, "--") || isOptionValue(prefix):
		// --name=VALUE, and Go's -name=VALUE
		_, v, found := strings.Cut(prefix, "=")
		_, vt, _ := strings.Cut(text, "=")
		return v, vt, false, found
	case strings.HasPrefix(prefix, "-"):
		v := strings.TrimLeft(prefix[1:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
		if v == prefix[1:] || !(len(v) > 1 && v[0] == '/' || v == ".." || strings.HasPrefix(v, "../")) {
			return "", "", false, false // "-la", "-O2", awk -F/, cut -d/
		}
		return v, v, false, true
	case isAssignment(prefix):
		_, v, _ := strings.Cut(prefix, "=")
		_, vt, _ := strings.Cut(text, "=")
		return v, vt, true, true
	}
	return prefix, text, false, true
}

// staticPrefix is the literal text of w before its first expansion, and
// whether an expansion follows. A word that starts with an expansion
// (brace expansions make the whole literal dynamic) falls back to the
// written text up to the first special character, so /etc/{a,b} gives
// /etc/.
func staticPrefix(w word) (string, bool) {
	rs := w.pathRunes()
	for i, r := range rs {
		if r == permission.Hole {
			if i == 0 {
				if cut := strings.IndexAny(w.text, "$`*?[{\"'\\~"); cut > 0 {
					return w.text[:cut], true
				}
			}
			return string(rs[:i]), true
		}
	}
	return string(rs), false
}

// prefixDir is the directory an expansion after prefix stays in:
// "/tmp/" and "/tmp/x" give /tmp, "src/" gives src.
func prefixDir(prefix string) string {
	switch {
	case prefix == "":
		return ""
	case strings.HasSuffix(prefix, "/"):
		if t := strings.TrimRight(prefix, "/"); t != "" {
			return t
		}
		return "/"
	}
	return path.Dir(prefix)
}

// isHomeText reports a word written to start in the home directory.
func isHomeText(text string) bool {
	for _, p := range []string{"$HOME", "${HOME"} {
		if rest, ok := strings.CutPrefix(text, p); ok && (rest == "" || !isNameChar(rest[0])) {
			return true // $HOME, $HOME/x, ${HOME}, ${HOME:-/}, not $HOMEDIR
		}
	}
	return strings.HasPrefix(text, "~")
}

func isNameChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// homeName is the pattern of a home path: "~" and the literal rest up to
// the first expansion ("$HOME/.ssh/*" → "~/.ssh").
func homeName(text string) string {
	if strings.HasPrefix(text, "${HOME") && !strings.HasPrefix(text, "${HOME}") {
		return "~" // ${HOME:-…}, ${HOME%…}: somewhere from the home directory
	}
	for _, p := range []string{"${HOME}", "$HOME"} {
		if rest, ok := strings.CutPrefix(text, p); ok {
			text = "~" + rest
		}
	}
	if cut := strings.IndexAny(text[1:], "$`*?[{\"'\\"); cut >= 0 {
		text = prefixDir(text[:cut+1])
		if text == "." {
			text = "~"
		}
	}
	if len(text) > 1 {
		text = strings.TrimRight(text, "/")
	}
	return text
}

// isOptionValue reports -name=VALUE (go test -coverprofile=…,
// -test.outputdir=…).
func isOptionValue(s string) bool {
	name, _, ok := strings.Cut(strings.TrimPrefix(s, "-"), "=")
	if !ok || name == "" || !strings.HasPrefix(s, "-") {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func hasDotDot(name string) bool {
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// escapes reports a relative name that climbs above its directory.
func escapes(name string) bool {
	c := path.Clean(filepath.ToSlash(name))
	return c == ".." || strings.HasPrefix(c, "../")
}

// isURL reports scheme://… words, which name no local file.
func isURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" {
		return false
	}
	for i, c := range scheme {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// safeDevice reports device files that hold no data of anyone's: reading
// or writing them touches no file outside the work tree.
func safeDevice(name string) bool {
	switch path.Clean(name) {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
		"/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return false
}
