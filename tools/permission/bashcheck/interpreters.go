package bashcheck

import (
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Programs that run shell commands given in their options or their input,
// which a rule for the program ("*", "vim *") does not mean to allow:
// editors and debuggers with command options (vim -c '!cmd', gdb -ex
// shell), ed's input, zip -TT, ssh's ProxyCommand, man -P, terminal
// multiplexers, and the inline code of interpreters (python -c, perl -e,
// node -e, ruby -e) or the program they read from a here-document, when
// it can run a command (os.system, child_process…).

// stdinKind is what a simple command reads as standard input.
type stdinKind int

const (
	stdinInherited stdinKind = iota // the caller's (the bash tool's): no program text
	stdinText                       // a here-document or here-string: text
	stdinPipe                       // a pipe or a descriptor: only known at run time
	stdinFile                       // < file: a file in the tree, like a script operand
)

// stdinSource is the standard input of one simple command.
type stdinSource struct {
	kind stdinKind
	text string // stdinText: the body, "" with expansions
	lit  bool   // stdinText: the body has no expansion
}

// collectStdin finds the standard input of each simple command of f that
// is read from a pipe, a here-document, a here-string or a file.
func collectStdin(f *syntax.File) map[*syntax.CallExpr]stdinSource {
	out := map[*syntax.CallExpr]stdinSource{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				if ce, ok := n.Y.Cmd.(*syntax.CallExpr); ok {
					out[ce] = stdinSource{kind: stdinPipe}
				}
			}
		case *syntax.Stmt:
			ce, ok := n.Cmd.(*syntax.CallExpr)
			if !ok {
				return true
			}
			for _, r := range n.Redirs {
				if r.N != nil && r.N.Value != "0" {
					continue
				}
				switch r.Op {
				case syntax.Hdoc, syntax.DashHdoc:
					out[ce] = textSource(r.Hdoc)
				case syntax.WordHdoc:
					out[ce] = textSource(r.Word)
				case syntax.RdrIn:
					out[ce] = stdinSource{kind: stdinFile}
				case syntax.DplIn, syntax.RdrInOut:
					out[ce] = stdinSource{kind: stdinPipe}
				}
			}
		}
		return true
	})
	return out
}

// textSource is a here-document's or here-string's body.
func textSource(w *syntax.Word) stdinSource {
	if w == nil {
		return stdinSource{kind: stdinText, lit: true}
	}
	if s := w.Lit(); s != "" || len(w.Parts) == 0 {
		return stdinSource{kind: stdinText, text: s, lit: true}
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if len(p.Parts) != 1 {
				return stdinSource{kind: stdinText}
			}
			l, ok := p.Parts[0].(*syntax.Lit)
			if !ok {
				return stdinSource{kind: stdinText}
			}
			b.WriteString(l.Value)
		default:
			return stdinSource{kind: stdinText}
		}
	}
	return stdinSource{kind: stdinText, text: b.String(), lit: true}
}

// interpreter is the option grammar of a language's command line.
type interpreter struct {
	code    string // short options whose value is program text (-c, -e)
	codeLng []string
	arg     string // short options that take the next word (or the rest of the cluster)
	argLng  []string
	module  string // short options that name a module to run instead of a script (python -m)
	runs    *regexp.Regexp
}

var (
	pythonRuns = regexp.MustCompile(`system|popen|subprocess|spawn|exec|eval|__|import_module|getattr|ctypes|\bpty\b|fork|builtins|importlib|runpy|breakpoint|\bpdb\b|code\.interact`)
	perlRuns   = regexp.MustCompile("system|exec|qx|`|fork|open|eval|syscall|readpipe|pipe|\\bdo\\b|require|&\\{|&\\$|->|CORE::")
	nodeRuns   = regexp.MustCompile(`child_process|spawn|exec|eval|Function|process\.binding|dlopen|\bvm\b|worker_threads|Worker|require\s*\(\s*[^'"\s]|import\s*\(\s*[^'"\s]|\[\s*['"]`)
	rubyRuns   = regexp.MustCompile("system|exec|spawn|popen|`|%x|fork|eval|send|Open3|IO\\.|Kernel|syscall|method|Process|open")
)

// interpreterFor returns the grammar of a language's interpreter, by basename.
func interpreterFor(base string) (interpreter, bool) {
	switch {
	case base == "python" || base == "pypy" || base == "pypy3" || strings.HasPrefix(base, "python2") || strings.HasPrefix(base, "python3"):
		return interpreter{code: "c", arg: "WX", argLng: []string{"check-hash-based-pycs"}, module: "m", runs: pythonRuns}, true
	case base == "perl" || strings.HasPrefix(base, "perl5"):
		return interpreter{code: "eE", arg: "", runs: perlRuns}, true
	case base == "node" || base == "nodejs":
		return interpreter{code: "ep", codeLng: []string{"eval", "print"}, arg: "r", argLng: []string{"require", "import", "loader"}, runs: nodeRuns}, true
	case base == "ruby":
		return interpreter{code: "e", arg: "rIC", runs: rubyRuns}, true
	}
	return interpreter{}, false
}

// interpreterProblem judges the program text an interpreter runs: inline
// (-c, -e) or read from standard input (no script operand). A script file
// or module is the project's code, judged by the rule for the command.
func interpreterProblem(prog string, args []word, in stdinSource) string {
	base := path.Base(prog)
	ip, ok := interpreterFor(base)
	if !ok {
		return ""
	}
	codes, script, module, why := interpreterArgs(ip, base, args)
	if why != "" || module {
		return why
	}
	for _, c := range codes {
		if !c.static() {
			return base + " runs program text only known at run time, which cannot be judged"
		}
		if m := ip.runs.FindString(c.lit()); m != "" {
			return base + "'s inline program can run a command (" + m + "), which cannot be judged; run the command directly"
		}
	}
	if len(codes) > 0 || script {
		return ""
	}
	switch in.kind {
	case stdinPipe:
		return base + " reads its program from a pipe, which cannot be judged; pass it with " + codeFlag(ip)
	case stdinText:
		if !in.lit {
			return base + " reads its program from a here-document with expansions, which cannot be judged; quote the delimiter (<<'EOF')"
		}
		if m := ip.runs.FindString(in.text); m != "" {
			return base + "'s program on standard input can run a command (" + m + "), which cannot be judged; run the command directly"
		}
	}
	return ""
}

// interpreterArgs reads an interpreter's command line: the program texts
// given inline, whether a script operand or module follows, and why the
// line cannot be judged.
func interpreterArgs(ip interpreter, base string, args []word) (codes []word, script, module bool, why string) {
	for i := 1; i < len(args) && !script; i++ {
		a := args[i]
		if !a.static() {
			if len(codes) == 0 && !strings.HasPrefix(a.text, "-") {
				return nil, false, false, base + " runs a program file only known at run time (" + a.text + "), which cannot be judged"
			}
			return nil, false, false, base + " " + a.text + " is only known at run time, so the program it runs cannot be judged"
		}
		s := a.lit()
		switch {
		case s == "-":
			return codes, false, false, ""
		case s == "--":
			script = i+1 < len(args)
		case strings.HasPrefix(s, "--"):
			name, value, eq := strings.Cut(s[2:], "=")
			switch {
			case contains(ip.codeLng, name) && eq:
				codes = append(codes, litWord(value))
			case contains(ip.codeLng, name) && i+1 < len(args):
				i++
				codes = append(codes, args[i])
			case contains(ip.argLng, name) && !eq:
				i++
			}
		case len(s) > 1 && s[0] == '-':
			var stop bool
			i, codes, stop = interpreterCluster(ip, args, i, codes)
			if stop {
				return codes, false, true, "" // python -m MODULE runs an installed module
			}
		case len(codes) == 0 && streamFile(s):
			if c := path.Clean(s); c == "/dev/stdin" || c == "/dev/fd/0" || c == "/proc/self/fd/0" {
				return codes, false, false, "" // the program is standard input
			}
			return nil, false, false, base + " reads its program from " + s + " (a descriptor or a device), which cannot be judged"
		default:
			script = true
		}
	}
	return codes, script, false, ""
}

// interpreterCluster reads the short options args[i] (-Sc CODE, -ne CODE,
// -eCODE); it returns the last word read and whether a module (-m) ends
// the options.
func interpreterCluster(ip interpreter, args []word, i int, codes []word) (int, []word, bool) {
	s := args[i].lit()
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case strings.IndexByte(ip.code, c) >= 0:
			if j+1 < len(s) {
				codes = append(codes, litWord(s[j+1:]))
			} else if i+1 < len(args) {
				i++
				codes = append(codes, args[i])
			}
			return i, codes, false
		case strings.IndexByte(ip.module, c) >= 0:
			return i, codes, true
		case strings.IndexByte(ip.arg, c) >= 0:
			if j+1 == len(s) {
				i++
			}
			return i, codes, false
		}
	}
	return i, codes, false
}

func codeFlag(ip interpreter) string { return "-" + ip.code[:1] }

// commandOptionProblem judges programs that run a shell command named in
// an option or in their input: editors, debuggers, zip, ssh, man and
// terminal multiplexers.
func commandOptionProblem(prog string, args []word) string {
	base := path.Base(prog)
	switch base {
	case "vi", "vim", "nvim", "ex", "view", "gvim", "vimdiff", "vim.basic", "vim.tiny", "vim.nox", "nano", "emacs", "ed", "red":
		return base + " runs editor commands (including !command) from its options or input, which cannot be judged; edit files with the edit tool"
	case "gdb", "lldb", "tmux", "screen", "expect":
		return base + " runs commands given in its options, scripts or input, which cannot be judged"
	case "make", "gmake":
		return makeProblem(base, args)
	}
	for i := 1; i < len(args); i++ {
		if !args[i].static() {
			continue
		}
		if why := optionProblem(base, args, i); why != "" {
			return why
		}
	}
	return ""
}

// optionProblem judges the option args[i] of a program that runs a
// command named in an option: zip, ssh, split, rsync, sqlite3, man.
func optionProblem(base string, args []word, i int) string {
	s := args[i].lit()
	switch base {
	case "zip":
		if s == "-TT" || strings.HasPrefix(s, "--unzip-command") {
			return "zip " + s + " runs a command to test the archive, which cannot be judged"
		}
	case "ssh", "scp", "sftp":
		if why := sshOption(base, args, i); why != "" {
			return why
		}
	case "split":
		if name, _, _ := strings.Cut(strings.TrimPrefix(s, "--"), "="); strings.HasPrefix(s, "--") && longPrefixOf(name, "filter") {
			return "split " + s + " runs a shell command for every piece, which cannot be judged"
		}
	case "rsync":
		if s == "-e" || strings.HasPrefix(s, "--rsh") || strings.HasPrefix(s, "--rsync-path") ||
			len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s, "e") {
			return "rsync " + s + " names a program rsync runs (the remote shell), which cannot be judged"
		}
	case "sqlite3":
		if strings.Contains(s, ".shell") || strings.Contains(s, ".system") {
			return "sqlite3's " + s + " runs a shell command, which cannot be judged"
		}
	case "man":
		if s == "-P" || strings.HasPrefix(s, "--pager") || strings.HasPrefix(s, "-H") || strings.HasPrefix(s, "--html") ||
			len(s) > 2 && s[0] == '-' && s[1] != '-' && strings.ContainsRune(s, 'P') {
			return "man " + s + " names a program man runs through the shell, which cannot be judged"
		}
	}
	return ""
}

// sshOption judges ssh's (or scp's, sftp's) option at args[i]: settings
// that run a local command (ProxyCommand, LocalCommand, KnownHostsCommand,
// Match exec), a config file that may hold them, and scp/sftp -S.
func sshOption(base string, args []word, i int) string {
	s := args[i].lit()
	var value string
	switch {
	case s == "-F" || strings.HasPrefix(s, "-F"):
		return base + " " + s + " reads a config file, whose commands (ProxyCommand) cannot be judged"
	case (base == "scp" || base == "sftp") && strings.HasPrefix(s, "-S"):
		return base + " " + s + " names a program to run in place of ssh, which cannot be judged"
	case s == "-o":
		if i+1 >= len(args) {
			return ""
		}
		if !args[i+1].static() {
			return base + " -o " + args[i+1].text + " is only known at run time"
		}
		value = args[i+1].lit()
	case strings.HasPrefix(s, "-o"):
		value = s[2:]
	default:
		return ""
	}
	fields := strings.FieldsFunc(value, func(r rune) bool { return r == '=' || r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return ""
	}
	switch strings.ToLower(fields[0]) {
	case "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match", "include":
		return base + " -o " + value + " makes ssh run a local command, which cannot be judged"
	}
	return ""
}

// makeProblem judges make's command line: --eval text, and variable
// assignments that choose the shell or its flags (SHELL, .SHELLFLAGS),
// run a command (NAME!=cmd), add makefiles or options (MAKEFILES,
// MAKEFLAGS), or hold text make expands ($(shell cmd) in any value).
func makeProblem(base string, args []word) string {
	for _, a := range args[1:] {
		if !a.static() {
			if strings.Contains(a.text, "=") {
				return base + " " + a.text + " assigns a value only known at run time, which make expands ($(shell …) runs a command)"
			}
			continue
		}
		s := a.lit()
		if s == "-E" || strings.HasPrefix(s, "--eval") || len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s, "E") {
			return base + " " + s + " evaluates makefile text, which can run a command ($(shell …)); put it in the Makefile"
		}
		if strings.HasPrefix(s, "-") {
			continue
		}
		lhs, value, ok := strings.Cut(s, "=")
		if !ok {
			continue
		}
		name := strings.TrimSpace(strings.TrimRight(lhs, ":+?!"))
		switch {
		case strings.HasSuffix(lhs, "!"):
			return base + " " + s + " is a shell assignment: make runs " + value
		case strings.ContainsAny(name, "$ \t") || holdsMakeCode(value):
			return base + " " + s + " holds text make expands, where $(shell …) runs a command, which cannot be judged"
		}
		switch name {
		case "SHELL", ".SHELLFLAGS", "MAKESHELL", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "MAKE", ".RECIPEPREFIX":
			return base + " " + s + " changes how make runs every recipe (its shell, flags or makefiles), which cannot be judged"
		}
	}
	return ""
}

// holdsMakeCode reports a value with a make reference: $(…) or ${…}.
func holdsMakeCode(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "${")
}
