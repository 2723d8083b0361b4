package bashcheck

import (
	"path"
	"strings"
)

// wrapped is what a command runs on behalf of its caller.
type wrapped struct {
	isWrapper   bool           // a known wrapper: deny rules see every tail of its words
	transparent bool           // allowed when its inner commands are
	problem     string         // non-empty: cannot be judged, deny
	inner       []innerCommand // commands it runs
	scripts     []word         // shell scripts it runs (sh -c)
	writes      []word         // files it writes (tee, find -fprint, git --output)
	reads       []word         // files it reads named inside other words (awk's getline < "f", go.mod replacements)
	noop        bool           // runs nothing (command -v)
}

type innerCommand struct {
	assigns []word // NAME=value given to the inner command (env)
	args    []word
}

// wrapperSpec describes a program that runs the command in its operands.
type wrapperSpec struct {
	transparent bool     // only changes how the command runs (timeout, nice…)
	shortArg    string   // short options that take the next word as argument
	optAttached string   // short options whose optional argument is attached (xargs -i)
	longArg     []string // long options that take the next word unless written with '='
	positional  int      // operands before the command (timeout's duration)
	assigns     bool     // NAME=value operands before the command (env)
	noCommand   string   // short options after which nothing runs (command -v)
	refuse      string   // short option that cannot be judged (env -S)
	refuseLong  string
	trailing    bool     // the command gets more arguments at run time (xargs)
	joinScript  bool     // the operands are joined with spaces and run by sh -c (watch)
	opaque      string   // short options that change more than how the command runs (env -u, -i, -C)
	opaqueLong  []string // their long forms
	scriptShort string   // short option whose value is a shell script (su -c)
	scriptLong  string   // long option whose value is a shell script (su --command)
}

// wrapperFor returns the spec of a known wrapper, by basename.
func wrapperFor(base string) (wrapperSpec, bool) {
	switch base {
	case "env":
		return wrapperSpec{transparent: true, shortArg: "uC", longArg: []string{"unset", "chdir"},
			assigns: true, refuse: "S", refuseLong: "split-string", opaque: "iuC0",
			opaqueLong: []string{"unset", "ignore-environment", "chdir", "null"}}, true
	case "timeout":
		return wrapperSpec{transparent: true, shortArg: "sk", longArg: []string{"signal", "kill-after"}, positional: 1}, true
	case "nice":
		return wrapperSpec{transparent: true, shortArg: "n", longArg: []string{"adjustment"}}, true
	case "nohup", "setsid", "builtin":
		return wrapperSpec{transparent: true}, true
	case "command":
		return wrapperSpec{transparent: true, noCommand: "vV"}, true
	case "exec":
		return wrapperSpec{transparent: true, shortArg: "a"}, true
	case "time":
		return wrapperSpec{transparent: true, shortArg: "fo", longArg: []string{"format", "output"}}, true
	case "stdbuf":
		return wrapperSpec{transparent: true, shortArg: "ioe", longArg: []string{"input", "output", "error"}}, true
	case "ionice":
		return wrapperSpec{transparent: true, shortArg: "cnp", longArg: []string{"class", "classdata", "pid"}}, true
	case "xargs":
		return wrapperSpec{transparent: true, shortArg: "adEILnPs", optAttached: "eil",
			longArg:  []string{"arg-file", "delimiter", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"},
			trailing: true}, true
	case "sudo":
		return wrapperSpec{shortArg: "ugChpDrtTU", longArg: []string{"user", "group", "close-from", "host", "prompt", "chdir", "role", "type", "command-timeout", "other-user"}}, true
	case "doas":
		return wrapperSpec{shortArg: "uC"}, true
	case "busybox":
		return wrapperSpec{}, true
	case "chroot":
		return wrapperSpec{longArg: []string{"userspec", "groups"}, positional: 1}, true
	case "flock":
		return wrapperSpec{shortArg: "wEn", longArg: []string{"timeout", "conflict-exit-code"}, positional: 1,
			refuse: "c", refuseLong: "command"}, true
	case "chrt":
		return wrapperSpec{transparent: true, shortArg: "TPD", longArg: []string{"sched-runtime", "sched-period", "sched-deadline"},
			positional: 1, noCommand: "p"}, true
	case "taskset":
		return wrapperSpec{transparent: true, positional: 1, noCommand: "p"}, true
	case "unshare", "fakeroot", "setpriv", "prlimit", "numactl", "catchsegv", "faketime", "firejail",
		"ssh-agent", "dbus-run-session", "dbus-launch", "valgrind", "nsenter", "systemd-run", "xvfb-run", "unbuffer",
		"cgexec", "proot", "bwrap", "chpst", "setuidgid", "daemonize", "pkexec", "parallel", "sem", "caffeinate", "rlwrap":
		return wrapperSpec{}, true
	case "sg":
		return wrapperSpec{positional: 1, joinScript: true, scriptShort: "c"}, true
	case "strace", "ltrace":
		return wrapperSpec{shortArg: "abeEIoOpPsSuUX", longArg: []string{"output", "trace", "signal", "user", "env"}}, true
	case "script":
		return wrapperSpec{shortArg: "BEIOTm", longArg: []string{"log-io", "log-in", "log-out", "log-timing", "echo", "logging-format"},
			scriptShort: "c", scriptLong: "command"}, true
	case "su", "runuser":
		return wrapperSpec{shortArg: "ugsw", longArg: []string{"user", "group", "supp-group", "shell", "whitelist-environment"},
			scriptShort: "c", scriptLong: "command"}, true
	case "watch":
		return wrapperSpec{shortArg: "nq", longArg: []string{"interval", "equexit"}, joinScript: true}, true
	}
	return wrapperSpec{}, false
}

// isShell reports programs whose -c operand is a shell script.
func isShell(base string) bool {
	switch base {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh":
		return true
	}
	return false
}

// unwrap finds the commands and scripts a command runs.
func unwrap(prog string, args []word) wrapped {
	base := path.Base(prog)
	if w, ok := unwrapFileProgram(base, args); ok {
		return w
	}
	switch {
	case base == "find":
		return unwrapFind(args)
	case base == "git":
		return unwrapGit(args)
	case base == "tee":
		return wrapped{writes: teeFiles(args)}
	case base == "go":
		return goCommand(args)
	case base == "sed":
		w := wrapped{writes: inPlaceWrites(base, args)}
		scripts, why := sedScripts(args)
		for _, s := range scripts {
			if why == "" {
				why = sedProblem(s)
			}
		}
		w.problem = why
		return w
	case base == "sort":
		w := wrapped{writes: inPlaceWrites(base, args)}
		for _, a := range args[1:] {
			if l := a.lit(); strings.HasPrefix(l, "--co") || !a.static() && strings.HasPrefix(a.text, "--co") {
				w.problem = "sort " + a.text + " (--compress-program) runs a program for its temporary files, which cannot be judged"
			}
		}
		return w
	case base == "rg":
		for _, a := range args[1:] {
			if l := a.lit(); l == "--pre" || strings.HasPrefix(l, "--pre=") || l == "--hostname-bin" || strings.HasPrefix(l, "--hostname-bin=") {
				return wrapped{problem: "rg " + a.text + " runs a program for every file it searches (or for the hostname), which cannot be judged"}
			}
		}
		return wrapped{}
	case base == "gofmt":
		return wrapped{writes: inPlaceWrites(base, args)}
	case isAwk(base):
		return awkCommand(args)
	case base == "tar":
		return wrapped{problem: tarProblem(args), writes: tarArchiveWrite(args)}
	case isShell(base):
		return unwrapShell(args)
	case base == "npm" || base == "npx":
		return npmCommand(base, args)
	}
	spec, ok := wrapperFor(base)
	if !ok {
		return wrapped{isWrapper: runsOperands(base, args)}
	}
	return unwrapWith(spec, args)
}

// unwrapWith parses a wrapper's options and operands up to the command.
func unwrapWith(spec wrapperSpec, args []word) wrapped {
	p := &wrapperParse{spec: spec, args: args, positional: spec.positional,
		w: wrapped{isWrapper: true, transparent: spec.transparent}}
	for p.i = 1; p.i < len(args); p.i++ {
		a := args[p.i]
		if !a.static() {
			if a.split || p.positional == 0 {
				p.w.problem = "a word before the wrapped command is only known at run time, so the command cannot be found"
				return p.w
			}
			p.positional--
			continue
		}
		if next, done := p.option(a.lit()); done {
			return p.w
		} else if next {
			continue
		}
		if !p.operand(a) {
			break
		}
	}
	return p.command()
}

// wrapperParse is the state of unwrapWith's walk over a wrapper's words.
type wrapperParse struct {
	spec       wrapperSpec
	args       []word
	i          int // the word being read
	w          wrapped
	inner      innerCommand
	positional int    // operands still expected before the command
	repl       string // xargs' replacement string (-I)
	optsDone   bool   // after "--"
}

// option reads the option s at p.i: next when it was one (read on), done
// when the parse ends here (p.w says why, or nothing runs).
func (p *wrapperParse) option(s string) (next, done bool) {
	spec := p.spec
	switch {
	case p.optsDone:
		return false, false // after "--": only assignments (env) and operands (timeout's duration)
	case s == "--":
		p.optsDone = true
	case spec.scriptLong != "" && (s == "--"+spec.scriptLong || strings.HasPrefix(s, "--"+spec.scriptLong+"=")):
		p.i += scriptOperand(&p.w, p.args, p.i, len("--"+spec.scriptLong))
	case spec.scriptShort != "" && len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s, spec.scriptShort):
		p.i += scriptOperand(&p.w, p.args, p.i, strings.Index(s, spec.scriptShort)+1)
	case strings.HasPrefix(s, "--") && p.positional == spec.positional:
		if name, _, _ := strings.Cut(s[2:], "="); contains(spec.opaqueLong, name) {
			p.w.transparent = false
		}
		skip, r, refuse := longOption(spec, s[2:])
		if refuse != "" {
			p.w.problem = refuse
			return false, true
		}
		if r != "" {
			p.repl = r
		}
		p.i += skip
	case len(s) > 1 && s[0] == '-' && p.positional == spec.positional:
		return true, p.shortOption(s)
	default:
		return false, false
	}
	return true, false
}

// shortOption reads a cluster of short options; true when the parse ends.
func (p *wrapperParse) shortOption(s string) bool {
	if p.spec.opaque != "" && strings.ContainsAny(s[1:], p.spec.opaque) {
		p.w.transparent = false
	}
	skip, r, stop := shortOptions(p.spec, s[1:])
	switch {
	case stop != "":
		p.w.problem = stop
		return true
	case skip < 0:
		p.w.noop = true
		return true // command -v: nothing runs
	}
	if r != "" {
		p.repl = r
	}
	p.i += skip
	if p.i >= len(p.args) && skip > 0 {
		return true
	}
	if skip > 0 && r == "\x00" { // -I REPL: the argument is the next word
		p.repl = p.args[p.i].lit()
	}
	return false
}

// operand takes a word before the command (env's NAME=VALUE, timeout's
// duration); false when a is the command.
func (p *wrapperParse) operand(a word) bool {
	switch s := a.lit(); {
	case p.spec.assigns && strings.Index(s, "=") > 0:
		// env takes any NAME=VALUE, not only shell identifiers
		// (BASH_FUNC_ls%%=() { …; } defines a function for bash)
		p.inner.assigns = append(p.inner.assigns, a)
		return true
	case p.positional > 0:
		p.positional--
		return true
	}
	return false
}

// command finishes the parse at the wrapped command, p.args[p.i:].
func (p *wrapperParse) command() wrapped {
	w, args, i := p.w, p.args, p.i
	if i >= len(args) {
		return w
	}
	if !p.optsDone && strings.HasPrefix(args[i].lit(), "-") {
		w.problem = "option " + args[i].text + " after the operands: the wrapped command cannot be found"
		return w
	}
	if p.spec.joinScript {
		return joinedScript(w, args[i:])
	}
	p.inner.args = replaceHoles(args[i:], p.repl)
	if p.spec.trailing {
		input := holeWord("ARGS…")
		input.unknown = "the words xargs reads from its input"
		p.inner.args = append(p.inner.args, input)
	}
	w.inner = []innerCommand{p.inner}
	return w
}

// joinedScript treats the operands as one shell script, as watch does.
func joinedScript(w wrapped, operands []word) wrapped {
	parts := make([]string, 0, len(operands))
	for _, o := range operands {
		if !o.static() {
			w.problem = "the command is only known at run time"
			return w
		}
		parts = append(parts, o.lit())
	}
	w.scripts = append(w.scripts, litWord(strings.Join(parts, " ")))
	return w
}

// longOption reads one long option (without the "--"): how many following
// words it consumes, xargs' replacement string, and a reason to refuse.
func longOption(spec wrapperSpec, opt string) (skip int, repl, refuse string) {
	name, _, hasValue := strings.Cut(opt, "=")
	if spec.refuseLong != "" && name == spec.refuseLong {
		return 0, "", "--" + name + " builds a command at run time, which cannot be judged"
	}
	if name == "replace" {
		repl = "{}"
		if _, v, ok := strings.Cut(opt, "="); ok && v != "" {
			repl = v
		}
	}
	if !hasValue && contains(spec.longArg, name) {
		skip = 1
	}
	return skip, repl, ""
}

// shortOptions reads one cluster of short options (without the '-'). It
// returns how many following words the cluster consumes (-1: nothing will
// run), the replacement string of xargs -i/-I ("\x00": it is the next
// word), and a reason to refuse.
func shortOptions(spec wrapperSpec, cluster string) (skip int, repl, refuse string) {
	for j, c := range cluster {
		switch {
		case spec.refuse != "" && strings.ContainsRune(spec.refuse, c):
			return 0, "", "-" + string(c) + " builds a command at run time, which cannot be judged"
		case spec.noCommand != "" && strings.ContainsRune(spec.noCommand, c):
			return -1, "", ""
		case strings.ContainsRune(spec.optAttached, c):
			if c == 'i' {
				repl = cluster[j+1:]
				if repl == "" {
					repl = "{}"
				}
			}
			return 0, repl, ""
		case strings.ContainsRune(spec.shortArg, c):
			if j+1 < len(cluster) {
				if c == 'I' {
					repl = cluster[j+1:]
				}
				return 0, repl, ""
			}
			if c == 'I' {
				return 1, "\x00", ""
			}
			return 1, "", ""
		}
	}
	return 0, "", ""
}

// replaceHoles turns words that contain an xargs/find replacement string
// into holes: their value is only known at run time.
func replaceHoles(ws []word, repl string) []word {
	out := make([]word, len(ws))
	for i, w := range ws {
		if repl != "" && w.static() && strings.Contains(w.lit(), repl) {
			out[i] = holeWord(w.text)
			out[i].unknown = "what replaces " + repl + " at run time"
			continue
		}
		out[i] = w
	}
	return out
}

// unwrapFind finds the commands of find's -exec, -execdir, -ok and -okdir.
func unwrapFind(args []word) wrapped {
	w := wrapped{isWrapper: true}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !a.static() {
			if a.split {
				w.problem = "a find argument is only known at run time and could add -exec"
				return w
			}
			continue
		}
		switch a.lit() {
		case "-exec", "-execdir", "-ok", "-okdir":
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				i++
				w.writes = append(w.writes, args[i])
			}
			continue
		default:
			continue
		}
		end := i + 1
		for end < len(args) && !(args[end].static() && (args[end].lit() == ";" || args[end].lit() == "+")) {
			end++
		}
		if end >= len(args) {
			w.problem = a.lit() + " has no terminating ';' or '+'"
			return w
		}
		if end > i+1 {
			w.inner = append(w.inner, innerCommand{args: replaceHoles(args[i+1:end], "{}")})
		}
		i = end
	}
	return w
}

// unwrapShell finds the script of `sh -c SCRIPT` (options may be clustered,
// as in -lc or -ec). A shell that reads its commands from standard input
// (no operand, or -s) cannot be judged.
func unwrapShell(args []word) wrapped {
	w := wrapped{isWrapper: true}
	script, stdin := false, false
	i := 1
options:
	for ; i < len(args); i++ {
		if !args[i].static() {
			break
		}
		s := args[i].lit()
		switch {
		case s == "--" || s == "-":
			i++
			break options
		case s == "--rcfile" || s == "--init-file":
			i++
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			script = script || (s[0] == '-' && strings.ContainsRune(s, 'c'))
			stdin = stdin || (s[0] == '-' && strings.ContainsRune(s, 's'))
			if strings.ContainsAny(s, "oO") {
				i++
			}
		default:
			break options
		}
	}
	switch {
	case script && i < len(args):
		w.scripts = append(w.scripts, args[i])
	case script:
		// sh -c without a script: an error, nothing runs
	case stdin || i >= len(args):
		w.problem = "the shell reads its commands from standard input, which cannot be judged; " +
			"run the commands directly or pass them with sh -c"
	case !args[i].static():
		w.problem = "the shell's script file is only known at run time, so its commands cannot be judged"
	case streamFile(args[i].lit()):
		w.problem = "the shell reads its script from " + args[i].lit() +
			" (standard input, a descriptor or a device), which cannot be judged; pass the commands with sh -c"
	}
	return w
}

// streamFile reports script operands that are not files in the work tree
// but a stream: /dev/stdin, /dev/fd/N, /proc/self/fd/N, /dev/tcp/…
func streamFile(name string) bool {
	c := path.Clean(name)
	return strings.HasPrefix(c, "/dev/") || strings.HasPrefix(c, "/proc/")
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// scriptOperand records the shell script given to an option at args[i]
// whose value starts at byte at of the word (after "-c", "--command" or
// "--command="), else in the next word; it returns the words consumed
// after args[i].
func scriptOperand(w *wrapped, args []word, i, at int) int {
	s := args[i].lit()
	if rest := strings.TrimPrefix(s[at:], "="); rest != "" {
		w.scripts = append(w.scripts, litWord(rest))
		return 0
	}
	if i+1 < len(args) {
		w.scripts = append(w.scripts, args[i+1])
		return 1
	}
	return 0
}
