package bashcheck

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// gitScriptOptions returns, for a git subcommand, the long options (and
// one-letter short options) whose value is a command line git runs with
// the shell.
func gitScriptOptions(sub string) (long []string, short string) {
	switch sub {
	case "rebase":
		return []string{"exec"}, "x"
	case "difftool":
		return []string{"extcmd"}, "x"
	case "clone":
		return []string{"upload-pack"}, "u"
	case "fetch", "pull", "ls-remote":
		return []string{"upload-pack"}, ""
	case "push", "send-pack":
		return []string{"receive-pack", "exec"}, ""
	case "archive":
		return []string{"exec"}, ""
	case "send-email":
		return []string{"sendmail-cmd", "to-cmd", "cc-cmd", "header-cmd"}, ""
	case "fetch-pack":
		return []string{"upload-pack", "exec"}, ""
	case "filter-branch":
		return []string{"setup", "env-filter", "tree-filter", "index-filter", "parent-filter",
			"msg-filter", "commit-filter", "tag-name-filter"}, ""
	}
	return nil, ""
}

// gitSubcommand returns the index of git's subcommand after its global
// options, -1 when there is none (or args is not a git command).
func gitSubcommand(args []word) int {
	if len(args) < 2 || !args[0].static() || path.Base(args[0].lit()) != "git" {
		return -1
	}
	i := 1
	for i < len(args) && args[i].static() && strings.HasPrefix(args[i].lit(), "-") {
		switch args[i].lit() {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds":
			i++
		}
		i++
	}
	if i >= len(args) || !args[i].static() {
		return -1
	}
	return i
}

// unwrapGit finds what a git command runs besides git: the shell commands
// of rebase --exec, difftool --extcmd, submodule foreach, bisect run,
// filter-branch filters and --upload-pack/--receive-pack; the files of
// --output; and the options that make git load configuration or hooks
// from elsewhere (--git-dir, --template, program-valued config).
func unwrapGit(args []word) wrapped {
	var w wrapped
	if why := gitDirProblem(args); why != "" {
		w.problem = why
		return w
	}
	sub := gitSubcommand(args)
	if sub < 0 {
		return w
	}
	name, rest := args[sub].lit(), args[sub+1:]
	switch name {
	case "submodule":
		return gitForeach(w, rest)
	case "bisect":
		if len(rest) > 1 && rest[0].static() && rest[0].lit() == "run" {
			w.inner = []innerCommand{{args: rest[1:]}}
		}
		return w
	case "config":
		w.problem = gitConfigWrite(rest)
		return w
	}
	long, short := gitScriptOptions(name)
	for i := 0; i < len(rest); i++ {
		v, skip, kind := gitOption(rest, i, long, short, name)
		i += skip
		switch kind {
		case gitOptScript:
			w.scripts = append(w.scripts, v)
		case gitOptOutput:
			w.writes = append(w.writes, v)
		case gitOptConfig:
			if !v.static() {
				w.problem = "git " + name + " sets configuration only known at run time"
				return w
			}
			key, value, _ := strings.Cut(v.lit(), "=")
			if programSetting(key, value) {
				w.problem = "git " + name + " sets " + key + ", which configures a program for git to run; it cannot be judged"
				return w
			}
		case gitOptTemplate:
			w.problem = "git " + name + " --template copies hooks from a directory into the repository, which cannot be judged"
			return w
		}
	}
	return w
}

// Kinds of git option values.
const (
	gitOptNone = iota
	gitOptScript
	gitOptOutput
	gitOptConfig
	gitOptTemplate
)

// gitOption reads the option at rest[i]: its value, how many extra words
// it took and what the value is. Long options may be abbreviated to any
// unambiguous prefix, as git's parse-options allows (--exe is --exec);
// short options may be clustered, the last one taking the rest of the
// word or the next word as its value (-yx CMD, -ixCMD).
func gitOption(rest []word, i int, long []string, short, sub string) (word, int, int) {
	a := rest[i]
	if !a.static() {
		return word{}, 0, gitOptNone
	}
	s := a.lit()
	next := func() (word, int) {
		if i+1 < len(rest) {
			return rest[i+1], 1
		}
		return litWord(""), 0
	}
	switch {
	case s == "--" || s == "-":
		return word{}, 0, gitOptNone
	case strings.HasPrefix(s, "--"):
		name, value, hasValue := strings.Cut(s[2:], "=")
		name = gitLongName(name, long, sub)
		k := gitLongKind(name, long, sub)
		if k == gitOptNone {
			return word{}, 0, gitOptNone
		}
		if hasValue {
			return litWord(value), 0, k
		}
		if name == "open-files-in-pager" { // its value is only ever attached
			return word{}, 0, gitOptNone
		}
		v, n := next()
		return v, n, k
	case strings.HasPrefix(s, "-"):
		for j := 1; j < len(s); j++ {
			k := gitShortKind(s[j], short, sub)
			if k == gitOptNone {
				continue
			}
			if rest := s[j+1:]; rest != "" {
				return litWord(rest), 0, k
			}
			if s[j] == 'O' { // git grep -O: the pager is only ever attached
				return word{}, 0, gitOptNone
			}
			v, n := next()
			return v, n, k
		}
	}
	return word{}, 0, gitOptNone
}

// gitLongOptions are the long options of sub whose value runs or writes.
func gitLongOptions(long []string, sub string) []string {
	out := append([]string{"output"}, long...)
	switch sub {
	case "format-patch":
		out = append(out, "output-directory")
	case "clone":
		out = append(out, "config", "template")
	case "init":
		out = append(out, "template")
	case "grep":
		out = append(out, "open-files-in-pager")
	}
	return out
}

// gitLongName expands an abbreviated long option to the option of
// gitLongOptions it is a prefix of (an exact name stays itself; an
// ambiguous prefix makes git fail, so any match is the safe side).
func gitLongName(name string, long []string, sub string) string {
	opts := gitLongOptions(long, sub)
	if name == "" || contains(opts, name) {
		return name
	}
	for _, o := range opts {
		if strings.HasPrefix(o, name) {
			return o
		}
	}
	return name
}

func gitLongKind(name string, long []string, sub string) int {
	switch {
	case contains(long, name):
		return gitOptScript
	case name == "output" || (name == "output-directory" && sub == "format-patch"):
		return gitOptOutput
	case name == "config" && sub == "clone":
		return gitOptConfig
	case name == "template" && (sub == "clone" || sub == "init"):
		return gitOptTemplate
	case name == "open-files-in-pager" && sub == "grep":
		return gitOptScript
	}
	return gitOptNone
}

func gitShortKind(c byte, short, sub string) int {
	switch {
	case strings.IndexByte(short, c) >= 0:
		return gitOptScript
	case c == 'c' && sub == "clone":
		return gitOptConfig
	case c == 'o' && sub == "format-patch":
		return gitOptOutput
	case c == 'O' && sub == "grep":
		return gitOptScript
	}
	return gitOptNone
}

// gitForeach finds the script of `git submodule [opts] foreach [--recursive] CMD…`:
// the operands joined by spaces and run by the shell.
func gitForeach(w wrapped, rest []word) wrapped {
	for i, a := range rest {
		if !a.static() {
			return w
		}
		if a.lit() != "foreach" {
			continue
		}
		j := i + 1
		for j < len(rest) && rest[j].static() && strings.HasPrefix(rest[j].lit(), "-") {
			j++
		}
		if j < len(rest) {
			return joinedScript(w, rest[j:])
		}
		return w
	}
	return w
}

// gitDirProblem refuses --git-dir (and GIT_DIR's option form) naming
// anything but the work tree's own .git: another directory's config can
// name programs git runs (core.fsmonitor, core.pager, hooks).
func gitDirProblem(args []word) string {
	if len(args) < 2 || !args[0].static() || path.Base(args[0].lit()) != "git" {
		return ""
	}
	for i := 1; i < len(args) && args[i].static() && strings.HasPrefix(args[i].lit(), "-"); i++ {
		s := args[i].lit()
		var dir word
		switch {
		case s == "--git-dir" && i+1 < len(args):
			i++
			dir = args[i]
		case strings.HasPrefix(s, "--git-dir="):
			dir = litWord(strings.TrimPrefix(s, "--git-dir="))
		case strings.HasPrefix(s, "--exec-path="):
			return "git " + s + " makes git run its helper programs from another directory, which cannot be judged"
		default:
			continue
		}
		if !dir.static() || path.Clean(dir.lit()) != ".git" {
			return "git --git-dir " + dir.text + ": another repository's configuration can name programs for git to run, which cannot be judged"
		}
	}
	return ""
}

// gitConfigWrite explains why `git config …` cannot be judged when it sets
// a key whose value git runs as a program; "" for reads and other keys.
func gitConfigWrite(rest []word) string {
	var operands []word
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.static() {
			return "git config with an operand only known at run time"
		}
		s := a.lit()
		switch {
		case s == "-f" || s == "--file" || s == "--blob" || s == "--type" || s == "--default" || s == "--comment" || s == "--value":
			i++
		case strings.HasPrefix(s, "-"):
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) > 0 && (operands[0].lit() == "set" || operands[0].lit() == "unset" || operands[0].lit() == "get" ||
		operands[0].lit() == "list" || operands[0].lit() == "edit" || operands[0].lit() == "rename-section" || operands[0].lit() == "remove-section") {
		if operands[0].lit() != "set" {
			return ""
		}
		operands = operands[1:]
	}
	if len(operands) < 2 {
		return ""
	}
	if programSetting(operands[0].lit(), operands[1].lit()) {
		return "git config " + operands[0].lit() + " configures a program for git to run, which cannot be judged"
	}
	return ""
}

// gitObjectPaths checks what a git command reads from the repository's
// history rather than the work tree: blobs named REV:PATH or :N:PATH
// (`git show HEAD:.env`, `git diff HEAD:.env x`, `git cat-file -p :.env`)
// and pathspecs whose glob may match a protected name (`git log -p --
// '*env'`: git's '*' matches a leading dot and '/'). Each gets the read
// protection of .git and .env*.
func (a *analyzer) gitObjectPaths(args []word) {
	sub := gitSubcommand(args)
	if sub < 0 {
		return
	}
	for _, w := range args[sub+1:] {
		s := string(w.pathRunes()) // HEAD:$'.env' names .env
		if strings.ContainsRune(s, permission.Hole) || strings.HasPrefix(s, "-") {
			continue
		}
		if magic, rest, ok := pathspecMagic(s); ok {
			a.gitMagicPathspec(w.text, magic, rest)
			continue
		}
		if rev, blob, ok := strings.Cut(s, ":"); ok && !isURL(s) && !isSCP(rev) {
			if stage, rest, staged := strings.Cut(blob, ":"); staged && rev == "" && len(stage) == 1 && stage[0] >= '0' && stage[0] <= '3' {
				blob = rest
			}
			a.gitProtected(w.text, blob, "git reads the blob "+s+" from the repository")
			continue
		}
		if strings.ContainsAny(s, "*?[") {
			a.gitPathspec(w.text, s)
		}
	}
}

// isSCP reports whether rev, the part of a word before its first ':', is
// the user@host of an scp-like URL (git@github.com:o/r) rather than a
// revision: revisions may hold '@' too (@, HEAD@{1}, main@{upstream}).
func isSCP(rev string) bool {
	user, host, ok := strings.Cut(rev, "@")
	return ok && user != "" && host != "" && !strings.ContainsAny(rev, "{}")
}

// pathspecMagic splits a pathspec with long magic, ":(icase,glob)rest",
// into its magic words and the rest.
func pathspecMagic(s string) (magic []string, rest string, ok bool) {
	body, found := strings.CutPrefix(s, ":(")
	if !found {
		return nil, "", false
	}
	words, rest, found := strings.Cut(body, ")")
	if !found {
		return nil, "", false
	}
	return strings.Split(words, ","), rest, true
}

// gitMagicPathspec checks a pathspec with long magic (`:(icase).ENV`,
// `:(top).env`, `:(literal).env`, `:(glob)**/.env`) as the path or glob
// it names; icase matches the protected names in any case, literal takes
// the rest as a path, exclude names everything else (no worse than no
// pathspec).
func (a *analyzer) gitMagicPathspec(subject string, magic []string, rest string) {
	if slices.ContainsFunc(magic, func(m string) bool { return m == "exclude" || strings.HasPrefix(m, "attr:") }) {
		return
	}
	if slices.Contains(magic, "icase") {
		rest = strings.ToLower(rest)
	}
	a.gitProtected(subject, rest, "git reads the pathspec "+subject+" from the repository")
	if !slices.Contains(magic, "literal") && strings.ContainsAny(rest, "*?[") {
		a.gitPathspec(subject, rest)
	}
}

// gitProtected applies the read protection to a repository path.
func (a *analyzer) gitProtected(subject, name, how string) {
	rel := path.Clean(strings.TrimPrefix(name, "/"))
	what := permission.ProtectedKind(rel)
	if what == "" {
		return
	}
	d := a.rs.CheckProtected(permission.Read, rel, what)
	if !d.Allowed {
		d.Reason = how + ": " + d.Reason
	}
	a.addPath(subject, rel, d)
}

// gitPathspec checks a pathspec glob against the protected names it may
// match.
func (a *analyzer) gitPathspec(subject, spec string) {
	pat := []rune(strings.TrimPrefix(spec, ":/"))
	for _, name := range []string{".env", ".env.local", "config/.env", ".git/config"} {
		if permission.MatchAll(string(pat), []rune(name)) {
			what := permission.ProtectedKind(name)
			d := a.rs.CheckProtected(permission.Read, spec, what)
			if !d.Allowed {
				d.Reason = fmt.Sprintf("the pathspec %s may match %s (git's * matches a leading dot): %s", spec, name, d.Reason)
			}
			a.addPath(subject, spec, d)
			return
		}
	}
}
