package bashcheck

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// Bounds that keep the analysis fast on hostile input; beyond them a
// command is denied as too complex to judge.
const (
	maxScriptDepth  = 8         // `sh -c` recursion
	maxWrapDepth    = 16        // wrappers around wrappers (timeout nice env …)
	maxTailWords    = 16        // words after a wrapper whose tails deny rules see
	maxWrapperWords = 256       // words of one wrapper command (timeout … CMD ARGS)
	maxNesting      = 256       // depth of the syntax tree (nested $( ), subshells, ifs)
	MaxCommandBytes = 64 * 1024 // a longer command line is not judged
)

// Check judges a bash command against rs. The command is parsed with
// mvdan.cc/sh/v3/syntax (bash dialect) and every simple command in it (in
// lists, pipelines, subshells, groups, if/for/while/case, command and
// process substitutions, `sh -c` scripts, and behind wrappers such as env,
// timeout, xargs or find -exec) is judged on its own; output redirections
// are edits of their target, checked like an edit tool's path. Anything
// that cannot be judged statically (a dynamic program name, eval, source,
// function definitions, a parse error) is denied.
//
// Decisions beyond the spec's letter:
//   - >&WORD writes the file WORD unless WORD is a descriptor number or '-';
//     the operands of tee, find -fprint* and git --output are edits too.
//   - cd/pushd to a static directory inside the work tree (outside .git)
//     and popd need no rule: they run nothing. A relative file write is
//     judged in every directory its command may run in (dirFlow); after a
//     cd to a directory that cannot be placed, it is denied.
//   - Code that bash evaluates from data is denied: ${!name}, ${name@P},
//     quoted a[$(cmd)] names given to read/unset/printf -v/declare/[ -v,
//     and variables that make bash or programs run code (BASH_CMDS,
//     BASH_ALIASES, BASH_FUNC_*, LD_PRELOAD, GIT_DIR, GIT_CONFIG_*…) set by
//     any route (NAME=…, for/select NAME, (( NAME=… )), ${NAME:=…}, read,
//     printf -v, declare). PATH, HOME, IFS, CDPATH, GLOBIGNORE, GOFLAGS,
//     CC… are guarded too: only PATH=$PATH:dir, an IFS prefix of one
//     command and GOFLAGS without -exec/-toolexec/… are allowed.
//   - Arithmetic ((( )), $(( )), $[ ], let, subscripts, ${v:off:len},
//     [[ -eq ]]) evaluates the value of every variable it names as code:
//     a variable this command does not set to static text, a command's
//     output, or '…' holding $(…) there is denied.
//   - Brace expansions are expanded before judging (at most 256 words):
//     every alternative is a word of its own (`cat {.e,}nv` reads .env).
//     A $NAME whose values the command sets statically (for f in *.go)
//     stands for each value.
//   - An argument whose value is only known at run time ($F, $(cmd),
//     ${x:-/etc/passwd}, xargs' input, find's {}) could name any file: it
//     is denied unless a dynamic_args rule matches the command the way a
//     bash rule does (dynamic_args: {"grep *": allow}). echo, printf,
//     test and other builtins that open no file are exempt.
//   - Options that run or write: go -exec/-toolexec/-vettool (the program
//     is judged as a command), -o and profile files (edits), -overlay,
//     -ldflags=-extld and go env -w (denied); gofmt -w, sed -i and sort -o
//     (edits); git options abbreviated or clustered (--exe, -yx CMD).
//   - Globs are matched in the work tree: a match through a symlink that
//     points out needs external_directory. git blobs (HEAD:.env, :.env)
//     and pathspec globs that may match .env get the read protection.
//   - git subcommands that run shell commands (rebase --exec, bisect run,
//     submodule foreach, difftool -x, filter-branch, --upload-pack…) are
//     analysed like sh -c; config that names a program is denied.
//   - Argument words (not the program name, nor a wrapped program or
//     script) and input redirections that name a path outside the work
//     tree must also pass external_directory, pattern the absolute,
//     symlink-free path (permission.KindPath checks): absolute paths, relative ones
//     that climb out with '..' or through a symlink, the value of
//     --name=VALUE, -name=VALUE and -oVALUE (absolute or "..") forms, the
//     absolute parts of NAME=VALUE, and words starting with ~, $HOME or
//     ${HOME} (pattern "~/…"). A word with an expansion is judged by the
//     directory of its static prefix (/tmp/* → /tmp). URLs, echo/printf operands and /dev/null-like
//     devices are not paths. Relative words are placed in every directory
//     the command may be in after cd/pushd/popd (dirFlow): `cd src && cat
//     ../x` reads x in the work tree, `cd src; cat ../x` may run from the
//     root; after a cd to a directory only known at run time, a word
//     climbing out with '..' is denied. Interpreters (python -c, awk
//     system()), paths inside option values the rules above do not take
//     apart (-Wl,-rpath,/x), and what programs open on their own (config
//     files, $HOME caches) are the rule author's business.
//   - The same words, when they name a path inside the work tree that is
//     in a .git directory or is an .env* file (after cd placement and
//     symlink resolution; the rule of permission.Paths.Check), get the read tool's
//     protection (permission.KindPath checks, permission read): `cat .env`, `cat <
//     .env`, `cp .env x`, `cp x .git/hooks/y`, `ls .git` and `git add .env`
//     are denied unless a read rule names .env or .git explicitly (`read:
//     {".env": allow}`). Whether an argument is read or written is not
//     known, so read decides it; output redirections stay edits. git's own
//     use of .git (`git status`) names no path. Globs are judged
//     conservatively: a component that starts with a literal and could
//     expand to .git or .env* (`.env*`, `.e*`, `.[e]nv`, `.*`, `*/.env`)
//     is protected, and its allow rule must name the element and match
//     the glob for every expansion (`.env*` allows `cat .env*`, `.env`
//     does not); brace and extended globs and substitutions whose text
//     mentions .env or .git are judged by that text. A component starting
//     with an expansion is not (`cat *` and `cat *.go`: bash's globs skip
//     dotfiles; `$F` is only known at run time). Words that name a path to
//     leave out are not reads: the value of --exclude, --exclude-dir,
//     --ignore and --ignore-dir, and find's -name/-path… pattern after
//     -not/'!' or before -prune. A word that merely looks like a path
//     (`grep .env src`, `git commit -m .env`) is denied too.
//   - Programs that walk a directory (grep -r, rg --hidden, tar -c, cp -r,
//     zip -r, rsync -r, diff -r) read what is below it: unless the sandbox
//     hides protected files (Options.ProtectedHidden), a walk reaching a
//     .git directory or an .env* file its exclusions do not leave out is a
//     read of it, and a symlink out that it follows is a path outside.
//   - A path through a directory that does not exist yet, after a command
//     of the line that may create a symlink (git apply, tar x, ln, a
//     project's own code), is denied: the link may point anywhere.
//   - Files named inside other words are paths too: -XVALUE clusters
//     (grep -f.env, sort -o/tmp/x: every split of the cluster), awk's
//     getline < "f" and print > "f", go mod edit -replace and go work use
//     directories. npm exec -c and npx -c scripts are judged like sh -c.
//   - cd - returns to a directory an earlier cd of the line left; a cd to
//     a directory that does not exist lands somewhere unknown (CDPATH,
//     cdable_vars); shopt changes only the options shoptSafe lists.
//   - Input beyond MaxCommandBytes, a syntax tree deeper than 256, or more
//     than 16 nested wrappers is denied as too complex to judge.
func Check(rs permission.Ruleset, workTree, command string) permission.Verdict {
	p, err := permission.NewPaths(workTree)
	return checkBash(rs, p, err, command, Options{})
}

// CheckPaths is Check with the work tree already resolved.
func CheckPaths(rs permission.Ruleset, p permission.Paths, command string) permission.Verdict {
	return checkBash(rs, p, nil, command, Options{})
}

// Options are facts about where the command will run.
type Options struct {
	// ProtectedHidden says the OS sandbox hides the protected .env* files
	// from the command: a program that walks a directory (grep -r) cannot
	// read them, so the walk is not judged. Unset (mode off, macOS), a
	// walk that reaches one is a read of it.
	ProtectedHidden bool
}

// CheckWith is CheckPaths under opts.
func CheckWith(rs permission.Ruleset, p permission.Paths, command string, opts Options) permission.Verdict {
	return checkBash(rs, p, nil, command, opts)
}

// Explain is permission.Explain with bash commands judged by Check.
func Explain(rs permission.Ruleset, workTree string, q permission.Query) permission.Explanation {
	return permission.Explain(rs, workTree, q, Check)
}

// ExplainWith is Explain with bash commands judged under opts, as the
// guard judges them where the run's sandbox hides protected files.
func ExplainWith(rs permission.Ruleset, workTree string, q permission.Query, opts Options) permission.Explanation {
	return permission.Explain(rs, workTree, q, func(rs permission.Ruleset, workTree, command string) permission.Verdict {
		p, err := permission.NewPaths(workTree)
		return checkBash(rs, p, err, command, opts)
	})
}

func checkBash(rs permission.Ruleset, p permission.Paths, pathsErr error, command string, opts Options) permission.Verdict {
	a := &analyzer{rs: rs, paths: p, pathsErr: pathsErr, hidden: opts.ProtectedHidden}
	if strings.IndexByte(command, 0) >= 0 {
		a.unjudgeable(strings.ReplaceAll(command, "\x00", `\0`), "the command contains a NUL byte, which the shell cannot be given; the parser would drop it")
	} else if len(command) > MaxCommandBytes {
		a.unjudgeable(command[:80]+"…", fmt.Sprintf("the command is %d bytes, more than the %d that are judged; "+
			"split it, or write long content with the write tool", len(command), MaxCommandBytes))
	} else {
		a.script(command, 0)
	}
	a.placeEdits()
	v := permission.Verdict{Command: command, Checks: a.checks, Allowed: true}
	if len(a.checks) == 0 {
		v.Checks = []permission.Check{{Kind: permission.KindSyntax, Subject: command,
			Decision: permission.DefaultDeny(permission.Bash, command, "empty command: there is nothing to run")}}
	}
	if c, denied := v.Denied(); denied {
		v.Allowed = false
		v.Reason = fmt.Sprintf("%s %s: %s", c.Kind, strconv.Quote(c.Subject), c.Decision.Reason)
		return v
	}
	v.Reason = "1 check allowed"
	if len(v.Checks) > 1 {
		v.Reason = fmt.Sprintf("all %d checks allowed", len(v.Checks))
	}
	return v
}

// analyzer collects checks while walking one command line.
type analyzer struct {
	rs        permission.Ruleset
	paths     permission.Paths
	pathsErr  error
	wrapDepth int // wrappers around the command being judged
	checks    []permission.Check
	// edits are the checks of files the command writes, decided only at
	// the end (placeEdits): a cd anywhere, even after them in a loop or
	// behind a wrapper, changes where a relative path lands.
	edits []pendingEdit
	// vars is what the script being judged assigns (collectVars)
	vars varFacts
	// at holds the directories each statement and simple command may run
	// in (dirFlow); dirs is that of the command being judged.
	at       map[syntax.Node]dirSet
	dirs     dirSet
	hidden   bool                   // the OS sandbox hides protected files (Options.ProtectedHidden)
	linkable bool                   // a command before this one may create a symlink (linkFacts)
	dash     map[syntax.Node]dirSet // where each `cd -` may land (dirFlow)
	dashTo   dirSet                 // that of the command being judged
	pathSeen map[string]bool        // path checks already recorded
	// stdin is the standard input of the script's commands that read a
	// pipe, a here-document or a file (collectStdin); stdinNow is that of
	// the command being judged.
	stdin    map[*syntax.CallExpr]stdinSource
	stdinNow stdinSource
}

// pendingEdit is a file write whose check waits for placeEdits.
type pendingEdit struct {
	check    int // index in checks
	target   string
	linkable bool   // a command before it may create a symlink (linkFacts)
	dirs     dirSet // where the writing command may run (dirFlow); nil: the root
}

func (a *analyzer) add(kind, subject string, d permission.Decision) {
	a.checks = append(a.checks, permission.Check{Kind: kind, Subject: subject, Decision: d})
}

// unjudgeable records a denial for something that cannot be judged.
func (a *analyzer) unjudgeable(subject, reason string) {
	a.add(permission.KindSyntax, subject, permission.DefaultDeny(permission.Bash, subject, reason))
}

// script parses src and judges everything in it.
func (a *analyzer) script(src string, depth int) {
	if depth > maxScriptDepth {
		a.unjudgeable(src, "shell scripts are nested too deeply to judge")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.unjudgeable(src, fmt.Sprintf("the command does not parse: %v", err))
		return
	}
	if treeDepth(f) > maxNesting {
		a.unjudgeable(src, fmt.Sprintf("the command nests more than %d levels deep, too deep to judge", maxNesting))
		return
	}
	saved, savedIn := a.vars, a.stdin
	vars, routes := collectVars(f)
	a.vars, a.stdin = vars, collectStdin(f)
	defer func() { a.vars, a.stdin = saved, savedIn }()
	a.guardRoutes(routes)
	a.flowDirs(f)
	outer := a.linkable // this script's commands run after a link the caller's earlier commands made
	links := collectLinks(f)
	defer func() { a.linkable = outer }()
	var visit func(syntax.Node) bool
	visit = func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			// the command first, then its redirections, as they read
			before := len(a.checks)
			defer a.noProgram(n, before)
			dirs := a.dirsAt(n)
			if n.Cmd != nil {
				syntax.Walk(n.Cmd, visit)
			}
			for _, r := range n.Redirs {
				syntax.Walk(r, visit)
				a.dirs = dirs
				a.redirect(r)
			}
			return false
		case *syntax.CallExpr:
			a.dirs, a.dashTo = a.dirsAt(n), a.dash[n]
			a.stdinNow = a.stdin[n]
			a.linkable = outer || links.after(n)
			a.call(n, depth)
		case *syntax.DeclClause:
			a.decl(n, depth)
		case *syntax.FuncDecl:
			name := "function"
			if n.Name != nil {
				name = n.Name.Value + "()"
			}
			a.unjudgeable(name, "function definitions are not allowed: a later command could call the function under any name")
		case *syntax.TestDecl:
			a.unjudgeable("@test", "bats test declarations are not allowed")
		case *syntax.TestClause, *syntax.LetClause:
			if why := exprProblem(n); why != "" {
				a.unjudgeable(nodeText(n), why)
			}
		case *syntax.ParamExp:
			if why := paramProblem(n); why != "" {
				a.unjudgeable(nodeText(n), why)
			}
		}
		if as, ok := n.(*syntax.Assign); ok && as.Name != nil && as.Value != nil && a.vars[as.Name.Value] != nil && a.vars[as.Name.Value].integer {
			if why := a.arithProblem(as.Value); why != "" {
				a.unjudgeable(nodeText(as), as.Name.Value+" is an integer variable (declare -i): "+why)
			}
		}
		for _, e := range arithContexts(n) {
			if why := a.arithProblem(e); why != "" {
				a.unjudgeable(nodeText(n), why)
			}
		}
		return true
	}
	syntax.Walk(f, visit)
}

// noProgram records a statement that ran no program and wrote no file
// (`(( i++ ))`, `[[ -f x ]]`, `< file`), so that every statement of a list
// leaves a check.
func (a *analyzer) noProgram(st *syntax.Stmt, before int) {
	if len(a.checks) > before {
		return
	}
	text := nodeText(st)
	a.add(permission.KindSyntax, text, permission.Decision{Allowed: true, Permission: permission.Bash, Pattern: text,
		Reason: "runs no program and writes no file"})
}

func (a *analyzer) call(ce *syntax.CallExpr, depth int) {
	assigns := make([]word, 0, len(ce.Assigns))
	for _, as := range ce.Assigns {
		assigns = append(assigns, assignWord(as))
	}
	args, why := a.expandWords(ce.Args)
	if why != "" {
		a.unjudgeable(nodeText(ce), why)
		return
	}
	a.assignments(assigns, depth, len(args) > 0)
	a.command(assigns, args, depth)
}

// decl judges declare/export/local/readonly/typeset/nameref as a command.
func (a *analyzer) decl(dc *syntax.DeclClause, depth int) {
	words := []word{litWord(dc.Variant.Value)}
	for _, as := range dc.Args {
		words = append(words, assignWord(as))
	}
	if why := codeArgProblem(dc.Variant.Value, words); why != "" {
		a.unjudgeable(nodeText(dc), why)
		return
	}
	a.judge(nil, words, nil, false)
	a.assignments(words[1:], depth, false)
}

// forbiddenReason explains why a builtin that runs code which cannot be
// judged statically, or that renames what runs, is denied; "" for any
// other command.
func forbiddenReason(prog string, args []word) string {
	if processFile(prog) {
		return prog + " names a program through the running process (/proc, /dev/fd), which cannot be judged"
	}
	switch prog {
	case "eval":
		return "eval runs a string as code, which cannot be judged statically"
	case "source", ".":
		return prog + " runs a script file, which cannot be judged statically"
	case "trap":
		return "trap runs a string as code later, which cannot be judged statically"
	case "shopt":
		return shoptProblem(args)
	case "enable":
		return "enable can load builtins from a shared library or hide builtins, which cannot be judged"
	case "alias":
		if len(args) > 1 {
			return "alias definitions are not allowed: a later command could run under another name"
		}
	case "fc":
		return "fc runs commands from the history or through an editor, which cannot be judged"
	case "compgen", "complete":
		for _, a := range args[1:] {
			if l := a.lit(); !a.static() || strings.HasPrefix(l, "-") && strings.ContainsAny(l, "CF") {
				return prog + " " + a.text + " runs a command or function to complete words, which cannot be judged"
			}
		}
	case "hash", "mapfile", "readarray":
		for _, a := range args[1:] {
			if l := a.lit(); strings.HasPrefix(l, "-") && strings.ContainsAny(l, "pC") {
				return prog + " " + l + " makes a name run another program or runs a callback, which cannot be judged"
			}
		}
	}
	return ""
}

// shoptSafe are the shell options a command may set or unset: none
// changes where cd goes, which files a glob matches or what runs.
// Refused, for example: dotglob and globskipdots (globs reach .env),
// cdable_vars (cd NAME goes to $NAME), nocaseglob, expand_aliases.
var shoptSafe = map[string]bool{
	"extglob": true, "globstar": true, "nullglob": true, "failglob": true, "nocasematch": true,
	"lastpipe": true, "inherit_errexit": true, "xpg_echo": true, "pipefail": true, "errexit": true,
	"nounset": true, "noglob": true, "checkwinsize": true, "histappend": true, "interactive_comments": true,
}

// shoptProblem refuses a shopt that sets or unsets an option outside
// shoptSafe; printing and querying options (shopt, shopt -p, -q) is fine.
func shoptProblem(args []word) string {
	for _, a := range args[1:] {
		switch l := a.lit(); {
		case !a.static():
			return "shopt " + a.text + " is only known at run time, so the option it changes cannot be judged"
		case strings.HasPrefix(l, "-") && strings.Trim(l[1:], "supqo") == "":
		case !shoptSafe[l]:
			return "shopt " + l + " changes how bash finds files or directories (globs, cd) or what it runs, " +
				"which the check relies on; only " + strings.Join(shoptSafeNames(), ", ") + " may be changed"
		}
	}
	return ""
}

func shoptSafeNames() []string {
	out := make([]string, 0, len(shoptSafe))
	for n := range shoptSafe {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// command judges one simple command given its assignment prefixes and
// words, then whatever it wraps.
func (a *analyzer) command(assigns, args []word, depth int) {
	if len(args) == 0 {
		a.judge(assigns, nil, nil, false)
		return
	}
	if args[0].lit() == "--" && len(args) > 1 {
		// `time -p -- rm x`: the parser leaves time's "--" as the program;
		// bash ends time's options there and runs the rest
		args = args[1:]
	}
	name := args[0]
	_, text := joinWords(append(append([]word(nil), assigns...), args...))
	if !name.static() {
		a.unjudgeable(text, fmt.Sprintf("the program name %s is not static (it is only known at run time)", name.text))
		return
	}
	prog := name.lit()
	if why := forbiddenReason(prog, args); why != "" {
		a.unjudgeable(text, why)
		return
	}
	if why := codeArgProblem(prog, args); why != "" {
		a.unjudgeable(text, why)
		return
	}
	if why := gitConfigProblem(args); why != "" {
		a.unjudgeable(text, why)
		return
	}
	if why := commandOptionProblem(prog, args); why != "" {
		a.unjudgeable(text, why)
		return
	}
	if why := interpreterProblem(prog, args, a.stdinNow); why != "" {
		a.unjudgeable(text, why)
		return
	}
	w := unwrap(prog, args)
	if w.isWrapper && len(args) > maxWrapperWords {
		a.unjudgeable(text, fmt.Sprintf("%s has more than %d words, too many to judge what it wraps", prog, maxWrapperWords))
		return
	}
	a.judge(assigns, args, &w, w.transparent && !strings.Contains(prog, "/"))
	a.pathArgs(prog, ownWords(args, w), args)
	a.walkReads(args)
	if path.Base(prog) == "git" {
		a.gitObjectPaths(args)
	}
	if len(w.inner) > 0 && a.wrapDepth >= maxWrapDepth {
		a.unjudgeable(text, "wrappers are nested too deeply to judge")
		return
	}
	a.wrapDepth++
	for _, inner := range w.inner {
		a.assignments(inner.assigns, depth, len(inner.args) > 0)
		a.command(append(append([]word(nil), assigns...), inner.assigns...), inner.args, depth)
	}
	a.wrapDepth--
	for _, f := range w.writes {
		a.edit(permission.KindWrite, f)
	}
	for _, r := range w.reads {
		for _, pw := range pathsOf(r) {
			a.pathWord(r.text, pw, true)
		}
	}
	dirs := a.dirs
	for _, s := range w.scripts {
		if !s.static() {
			a.unjudgeable(s.text, "the shell script is not static (it is only known at run time)")
			continue
		}
		a.dirs = dirs // the script starts where its shell was started
		a.script(s.lit(), depth+1)
	}
}

// judge decides one simple command. Allow rules must cover the whole
// command, assignment prefixes included; deny rules are also tried without
// the prefixes, with the program's basename, and (for wrappers) on every
// tail of the words, so that no spelling escapes them.
func (a *analyzer) judge(assigns, args []word, w *wrapped, transparent bool) {
	full := append(append([]word(nil), assigns...), args...)
	subject, text := joinWords(full)
	variants := denyVariants(assigns, args, w != nil && w.isWrapper)
	d := a.rs.Decide(permission.Bash, text,
		func(r permission.Rule) bool { return permission.MatchAll(r.Pattern, subject) },
		func(r permission.Rule) bool {
			for _, v := range variants {
				if permission.MatchSome(r.Pattern, v) {
					return true
				}
			}
			return false
		})
	if w != nil && w.problem != "" && (d.Allowed || d.Rule == nil) {
		d = permission.DefaultDeny(permission.Bash, text, w.problem)
	} else if !d.Allowed && d.Rule == nil && transparent && (len(w.inner) > 0 || w.noop) {
		d.Allowed = true
		d.Reason = fmt.Sprintf("%s only wraps another command, which is judged on its own", args[0].lit())
	} else if !d.Allowed && d.Rule == nil && len(assigns) == 0 {
		if dir, ok := a.cdInside(args); ok {
			d.Allowed = true
			d.Reason = fmt.Sprintf("%s only changes the directory, to %s inside the work tree", args[0].lit(), dir)
		}
	}
	a.add(permission.KindCommand, text, d)
}

// denyVariants lists the spellings deny rules are matched against.
func denyVariants(assigns, args []word, wrapper bool) [][]rune {
	var out [][]rune
	addBoth := func(ws []word) {
		if len(ws) == 0 {
			return
		}
		s, _ := joinWords(ws)
		out = append(out, s)
		if ws[0].static() && strings.Contains(ws[0].lit(), "/") {
			based := append([]word{litWord(path.Base(ws[0].lit()))}, ws[1:]...)
			s, _ := joinWords(based)
			out = append(out, s)
		}
	}
	addBoth(append(append([]word(nil), assigns...), args...))
	addBoth(args)
	if plain := withoutGitOptions(args); plain != nil {
		addBoth(plain)
	}
	if wrapper {
		// the wrapped command itself is judged on its own; the tails are
		// a second line for options the unwrapping does not know
		for k := 1; k < len(args) && k <= maxTailWords; k++ {
			addBoth(args[k:])
		}
	}
	return out
}

// withoutGitOptions returns a git command without its global options
// ("git -C dir -c k=v --no-pager push" → "git push"), so that a deny rule
// such as "git push*" sees the subcommand; nil when there is nothing to
// strip.
func withoutGitOptions(args []word) []word {
	if len(args) < 2 || !args[0].static() || path.Base(args[0].lit()) != "git" {
		return nil
	}
	i := 1
	for i < len(args) && args[i].static() && strings.HasPrefix(args[i].lit(), "-") {
		switch args[i].lit() {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds":
			i++
		}
		i++
	}
	if i == 1 || i >= len(args) {
		return nil
	}
	return append([]word{litWord("git")}, args[i:]...)
}

// treeDepth is the depth of f's syntax tree.
func treeDepth(f *syntax.File) int {
	depth, deepest := 0, 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		deepest = max(deepest, depth)
		return true
	})
	return deepest
}
