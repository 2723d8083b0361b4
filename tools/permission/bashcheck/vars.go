package bashcheck

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// Kinds of variables whose value is code.
const (
	varPlain  = iota
	varHook   // makes programs load or run something at start-up
	varPrompt // expanded again when shown (PS4 under set -x)
	varScript // a command line some program runs with sh -c
	varGuard  // changes where later commands look for programs, files or words
)

// classifyVar tells what assigning name does beyond setting a value.
func classifyVar(name string) int {
	switch name {
	case "BASH_CMDS", "BASH_ALIASES", "GIT_ALLOW_PROTOCOL", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH",
		"GIT_DIR", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_TEMPLATE_DIR":
		return varHook
	case "PS0", "PS1", "PS2", "PS3", "PS4":
		return varPrompt
	case "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
		"GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE":
		return varScript
	}
	if strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") ||
		strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "CGO_") && name != "CGO_ENABLED" {
		return varHook
	}
	if guardWhy(name) != "" {
		return varGuard
	}
	if strings.HasPrefix(name, "GIT_") && !plainGitVar(name) {
		return varHook
	}
	return varPlain
}

// guardWhy says what a guarded variable changes, "" for others.
func guardWhy(name string) string {
	switch name {
	case "PATH":
		return "changes which program a command name runs"
	case "CDPATH":
		return "changes where cd goes"
	case "HOME":
		return "changes what ~ means and where programs read their settings (~/.gitconfig)"
	case "IFS":
		return "changes how every later unquoted expansion splits into words"
	case "GLOBIGNORE":
		return "makes globs match dotfiles such as .env"
	case "GOFLAGS", "GOENV", "GOROOT", "GOTOOLCHAIN", "GOBIN", "GCCGO", "CC", "CXX", "FC", "AR", "PKG_CONFIG",
		"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB",
		"RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "MAKEFLAGS", "BASH_XTRACEFD", "EXECIGNORE",
		"BASH_LOADABLES_PATH", "INPUTRC", "TAR_OPTIONS", "ZIPOPT", "GCONV_PATH", "RSYNC_RSH":
		return "changes which programs or files later commands use"
	case "XDG_CONFIG_HOME":
		return "changes where programs read their settings ($XDG_CONFIG_HOME/git/config)"
	case "ZDOTDIR":
		return "changes where zsh reads its start-up files ($ZDOTDIR/.zshenv runs for every zsh)"
	}
	return ""
}

// plainGitVar reports git variables that only carry data (identity,
// prompts, output), not programs, repositories or configuration.
func plainGitVar(name string) bool {
	switch name {
	case "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
		"GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_MERGE_AUTOEDIT",
		"GIT_LFS_SKIP_SMUDGE", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH",
		"GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_PROXY_COMMAND":
		return true
	}
	return false
}

// assignments judges the values of NAME=value words that are code: hooks
// are denied, prompts that would substitute commands are denied, and
// command-line variables (GIT_SSH_COMMAND, PAGER, …) are analysed as
// scripts.
func (a *analyzer) assignments(ws []word, depth int, prefix bool) {
	for _, w := range ws {
		name, value, ok := splitAssign(w)
		if !ok {
			// env's NAME=value with a name bash would not take
			// (BASH_FUNC_ls%%), or NAME[subscript]=value: the name
			// still decides what it does
			n := leadingName(w)
			if before, _, found := strings.Cut(w.lit(), "="); w.static() && found {
				n = before
			}
			if n != "" && classifyVar(n) != varPlain {
				a.unjudgeable(w.text, n+" makes the shell or programs load or run code, which cannot be judged")
			}
			continue
		}
		if value.static() && (strings.Contains(value.lit(), "$(") || strings.Contains(value.lit(), "`")) {
			a.unjudgeable(w.text, name+" would hold shell code, which a later expansion "+
				"(arithmetic, a prompt, indirection) could run; it cannot be judged")
			continue
		}
		switch classifyVar(name) {
		case varHook:
			a.unjudgeable(w.text, name+" makes programs load or run code, which cannot be judged")
		case varGuard:
			if why := guardedValue(name, value, prefix); why != "" {
				a.unjudgeable(w.text, why)
			}
		case varPrompt:
			if !value.static() || strings.Contains(value.lit(), "$(") || strings.Contains(value.lit(), "`") {
				a.unjudgeable(w.text, name+" is expanded again when shown and would run a command substitution")
			}
		case varScript:
			if !value.static() {
				a.unjudgeable(w.text, name+" holds a command line that is only known at run time")
				continue
			}
			if strings.TrimSpace(value.lit()) != "" {
				a.script(value.lit(), depth+1)
			}
		}
	}
}

// guardedValue explains why assigning value to a guarded variable is
// denied; "" for the values that change nothing the check relies on: PATH
// extended at its end ($PATH:dir, whose dirs are path-checked), IFS for
// one read (IFS= read -r line), GOFLAGS whose flags run and write nothing.
func guardedValue(name string, value word, prefix bool) string {
	switch name {
	case "IFS":
		if prefix {
			return ""
		}
	case "PATH":
		if strings.HasPrefix(value.text, "$PATH:") || strings.HasPrefix(value.text, "${PATH}:") {
			return ""
		}
		return "PATH=" + value.text + " changes which program a command name runs; only appending ($PATH:dir) is allowed"
	case "GOFLAGS":
		if !value.static() {
			return "GOFLAGS holds go flags only known at run time, which could run programs (-toolexec, -exec)"
		}
		if why := goFlagsProblem(strings.Fields(value.lit())); why != "" {
			return "GOFLAGS=" + value.lit() + ": " + why
		}
		return ""
	}
	return name + " " + guardWhy(name) + ", which the check cannot follow"
}

// splitAssign splits a NAME=value (or NAME+=value) word; ok is false when
// the word is not an assignment with a static name.
func splitAssign(w word) (string, word, bool) {
	for i, r := range w.runes {
		if r == permission.Hole {
			return "", word{}, false
		}
		if r != '=' {
			continue
		}
		name := strings.TrimSuffix(string(w.runes[:i]), "+")
		if !isAssignment(name + "=") {
			return "", word{}, false
		}
		text := w.text
		if j := strings.IndexByte(text, '='); j >= 0 {
			text = text[j+1:]
		}
		return name, word{runes: w.runes[i+1:], text: text}, true
	}
	return "", word{}, false
}

// gitConfigProblem explains why a git command's -c/--config-env options
// cannot be judged: they can name a program git runs (an alias starting
// with '!', a pager, an ssh command, a filter, a hook path…).
func gitConfigProblem(args []word) string {
	if len(args) < 2 || path.Base(args[0].lit()) != "git" {
		return ""
	}
	for i := 1; i < len(args) && args[i].static() && strings.HasPrefix(args[i].lit(), "-"); i++ {
		opt := args[i].lit()
		var kv string
		switch {
		case opt == "-c" || opt == "--config-env":
			if i+1 >= len(args) {
				return ""
			}
			i++
			if !args[i].static() {
				return "git " + opt + " with a value only known at run time"
			}
			kv = args[i].lit()
		case strings.HasPrefix(opt, "--config-env="):
			kv = strings.TrimPrefix(opt, "--config-env=")
		default:
			continue
		}
		key, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(opt, "--config-env") {
			value = "!" // the value comes from the environment: unknown
		}
		if programSetting(key, value) {
			return "git " + opt + " " + key + " configures a program for git to run, which cannot be judged"
		}
	}
	return ""
}

// programSetting reports a git configuration entry that makes git run a
// program: a key that names one, or an alias whose value starts with '!'
// (an alias without it only expands to git arguments, and git refuses one
// that would change the environment, such as -c).
func programSetting(key, value string) bool {
	k := strings.ToLower(key)
	if strings.HasPrefix(k, "alias.") {
		return strings.HasPrefix(strings.TrimSpace(value), "!")
	}
	return runsProgram(k)
}

// runsProgram reports git configuration keys whose value is run as a
// command (or chooses what runs).
func runsProgram(key string) bool {
	for _, p := range []string{"alias.", "filter.", "protocol.", "credential", "pager.", "core.pager", "core.sshcommand", "core.editor",
		"core.fsmonitor", "core.hookspath", "core.askpass", "core.gitproxy", "diff.external", "sequence.editor",
		"uploadpack.packobjectshook", "include.", "includeif.", "sendemail.", "instaweb.", "init.templatedir",
		"interactive.difffilter", "web.browser", "browser.", "man."} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	if strings.HasPrefix(key, "submodule.") && strings.HasSuffix(key, ".update") {
		return true // update = !command
	}
	// core.alternateRefsCommand, gpg.ssh.defaultKeyCommand, remote.NAME.uploadpack…
	for _, s := range []string{"command", "cmd", "pack"} {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	for _, s := range []string{".textconv", ".driver", ".program", ".helper", ".path", ".tool"} {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	return false
}

// holdsCode reports a static string that bash would expand again if it
// used it as a variable name, an array subscript or an arithmetic
// expression: `a[$(cmd)]` runs cmd.
func holdsCode(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "${") || strings.Contains(s, "`")
}

// evaluatesArgs reports builtins that treat their operands as variable
// names or arithmetic, whose subscripts bash expands: a quoted
// 'a[$(cmd)]' given to them runs cmd.
func evaluatesArgs(prog string) bool {
	switch prog {
	case "let", "read", "unset", "wait", "getopts", "mapfile", "readarray",
		"declare", "typeset", "local", "export", "readonly":
		return true
	}
	return false
}

// codeArgProblem explains why a builtin's static operand cannot be judged
// because bash would evaluate it as code; "" when none would.
func codeArgProblem(prog string, args []word) string {
	check := func(w word) string {
		if w.static() && holdsCode(w.lit()) {
			return prog + " would evaluate " + w.text + " as a name or arithmetic and run the code in it, which cannot be judged"
		}
		return ""
	}
	switch {
	case prog == "[" || prog == "test":
		// only -v NAME and -R NAME evaluate their operand
		for i := 1; i+1 < len(args); i++ {
			if l := args[i].lit(); args[i].static() && (l == "-v" || l == "-R") {
				if why := check(args[i+1]); why != "" {
					return why
				}
			}
		}
	case evaluatesArgs(prog):
		nameref := false
		for _, w := range args[1:] {
			if w.static() && strings.HasPrefix(w.lit(), "-") {
				nameref = nameref || strings.Contains(w.lit(), "n")
				continue
			}
			if declares(prog) && nameref {
				if _, value, ok := splitAssign(w); ok {
					if why := hookName(prog, value); why != "" {
						return why
					}
				}
			}
			if declares(prog) {
				// the value of NAME=value is judged by assignments
				if _, _, ok := splitAssign(w); ok {
					w = assignedName(w)
					if why := check(w); why != "" {
						return why
					}
					continue
				}
			}
			if why := check(w); why != "" {
				return why
			}
			if why := hookName(prog, w); why != "" {
				return why
			}
		}
	case prog == "printf":
		for i := 1; i+1 < len(args); i++ {
			if args[i].static() && args[i].lit() == "-v" {
				if why := check(args[i+1]); why != "" {
					return why
				}
				return hookName(prog, args[i+1])
			}
		}
	}
	return ""
}

// hookName explains why a builtin may not set, export, unset or alias by
// name (read, printf -v, export NAME, declare -n r=NAME) a variable that
// makes the shell or a program run code (BASH_CMDS, GIT_PAGER, LD_PRELOAD,
// GIT_CONFIG_COUNT…): its value is only known at run time.
func hookName(prog string, w word) string {
	if !w.static() {
		return ""
	}
	s := w.lit()
	end := 0
	for end < len(s) && (s[end] == '_' || s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z' || end > 0 && s[end] >= '0' && s[end] <= '9') {
		end++
	}
	if end == 0 || classifyVar(s[:end]) == varPlain {
		return ""
	}
	return prog + " " + s + ": " + s[:end] + " makes the shell or programs run code, and its value here is only known at run time"
}

// exprProblem explains why an expression inside [[ ]] or let cannot be
// judged: a static word with code in it, or a parameter expansion that
// evaluates a value as code (${!name}, ${name@P}); "" otherwise.
func exprProblem(n syntax.Node) string {
	why := ""
	syntax.Walk(n, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		if w, ok := n.(*syntax.Word); ok {
			if cw := convertWord(w); cw.static() && holdsCode(cw.lit()) {
				why = "the expression " + cw.text + " would be evaluated and run the code in it, which cannot be judged"
			}
		}
		return true
	})
	return why
}

// paramProblem explains why a parameter expansion cannot be judged: ${!name}
// takes the value of name as a variable name (whose subscript bash
// expands), and ${name@P} expands the value as a prompt, command
// substitutions included.
func paramProblem(pe *syntax.ParamExp) string {
	if pe.Excl && pe.Names == 0 {
		if pe.Index == nil || !isAllIndex(pe.Index) {
			return "indirect expansion ${!name} uses a value only known at run time as a variable name, which can run code"
		}
	}
	if pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps && pe.Exp.Word != nil && strings.ContainsAny(pe.Exp.Word.Lit(), "PE") {
		return "${name@" + pe.Exp.Word.Lit() + "} expands a value only known at run time again, which can run code"
	}
	return ""
}

// isAllIndex reports the subscript [@] or [*] (${!a[@]} lists keys).
func isAllIndex(e syntax.ArithmExpr) bool {
	w, ok := e.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// declares reports the declaration builtins, whose operands are NAME=value.
func declares(prog string) bool {
	switch prog {
	case "declare", "typeset", "local", "export", "readonly":
		return true
	}
	return false
}

// assignedName is the NAME part of a NAME=value word (the whole word when
// it has no '=').
func assignedName(w word) word {
	for i, r := range w.runes {
		if r == '=' {
			return word{runes: w.runes[:i], text: w.text}
		}
	}
	return w
}

// leadingName is the variable name at the start of an assignment word
// whose subscript is dynamic (NAME[…]=value), "" when there is none.
func leadingName(w word) string {
	end := 0
	for end < len(w.runes) && w.runes[end] != permission.Hole && w.runes[end] != '=' {
		end++
	}
	if end == len(w.runes) || w.runes[end] != permission.Hole {
		return ""
	}
	name := string(w.runes[:end])
	if !isAssignment(name + "=") {
		return ""
	}
	return name
}
