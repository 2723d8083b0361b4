package permission

import (
	"path"
	"strings"
)

// Kinds of variables whose value is code.
const (
	varPlain  = iota
	varHook   // makes programs load or run something at start-up
	varPrompt // expanded again when shown (PS4 under set -x)
	varScript // a command line some program runs with sh -c
)

// classifyVar tells what assigning name does beyond setting a value.
func classifyVar(name string) int {
	switch name {
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH":
		return varHook
	case "PS0", "PS1", "PS2", "PS3", "PS4":
		return varPrompt
	case "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
		"GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE":
		return varScript
	}
	if strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return varHook
	}
	return varPlain
}

// assignments judges the values of NAME=value words that are code: hooks
// are denied, prompts that would substitute commands are denied, and
// command-line variables (GIT_SSH_COMMAND, PAGER, …) are analysed as
// scripts.
func (a *analyzer) assignments(ws []word, depth int) {
	for _, w := range ws {
		name, value, ok := splitAssign(w)
		if !ok {
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

// splitAssign splits a NAME=value (or NAME+=value) word; ok is false when
// the word is not an assignment with a static name.
func splitAssign(w word) (string, word, bool) {
	for i, r := range w.runes {
		if r == hole {
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
		key, _, _ := strings.Cut(kv, "=")
		if runsProgram(strings.ToLower(key)) {
			return "git " + opt + " " + key + " configures a program for git to run, which cannot be judged"
		}
	}
	return ""
}

// runsProgram reports git configuration keys whose value is run as a
// command (or chooses what runs).
func runsProgram(key string) bool {
	for _, p := range []string{"alias.", "filter.", "credential", "pager.", "core.pager", "core.sshcommand", "core.editor",
		"core.fsmonitor", "core.hookspath", "core.askpass", "core.gitproxy", "diff.external", "sequence.editor",
		"uploadpack.packobjectshook", "include.", "includeif."} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	for _, s := range []string{".textconv", ".command", ".driver", ".program", ".helper", ".cmd", ".path", ".tool"} {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	return false
}
