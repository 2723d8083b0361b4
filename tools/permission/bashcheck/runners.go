package bashcheck

import (
	"strings"
)

// Programs that run other programs through their options or their
// program text, which a rule for the program itself ("awk *", "tar *")
// does not mean to allow: awk's system(), its pipes (print | "cmd",
// "cmd" | getline, |&) and gawk's @load/@include and indirect calls;
// tar's --checkpoint-action=exec, -I/--use-compress-program,
// --to-command, -F/--info-script/--new-volume-script, --rsh-command and
// --rmt-command. Each is a problem (deny) with the reason.

// isAwk reports the awk implementations.
func isAwk(base string) bool {
	switch base {
	case "awk", "gawk", "mawk", "nawk", "original-awk":
		return true
	}
	return false
}

// awkCommand judges an awk command line: a program file (-f, gawk's
// --file/--exec/--include/--load, mawk's -W exec) cannot be judged, the
// program text (the first operand, or gawk's -e/--source) must not run
// commands, and the files it opens (getline < "f", print > "f") are reads
// and writes of the command.
func awkCommand(args []word) wrapped {
	var io awkIO
	why := awkProblem(args, &io)
	if why == "" {
		why = io.problem
	}
	return wrapped{problem: why, reads: io.reads, writes: io.writes}
}

// awkIO collects the files awk program text opens.
type awkIO struct {
	reads, writes []word
	problem       string // a file named by an expression only known at run time
}

func awkProblem(args []word, io *awkIO) string {
	sources := 0
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !a.static() {
			return "awk " + a.text + " is only known at run time, so its program cannot be judged"
		}
		s := a.lit()
		switch {
		case s == "--":
			if i+1 < len(args) && sources == 0 {
				return awkProgramProblem(args[i+1], io)
			}
			return ""
		case strings.HasPrefix(s, "--"):
			name, value, hasValue := strings.Cut(s[2:], "=")
			switch {
			case longPrefixOf(name, "file", "exec", "include", "load"):
				return "awk " + s + " runs a program file, which cannot be judged"
			case longPrefixOf(name, "source"):
				if !hasValue {
					if i++; i >= len(args) {
						return ""
					}
					if why := awkProgramProblem(args[i], io); why != "" {
						return why
					}
				} else if why := awkTextProblem(value, io); why != "" {
					return why
				}
				sources++
			case longPrefixOf(name, "assign", "field-separator") && !hasValue:
				i++
			}
		case len(s) > 1 && s[0] == '-':
			skip, why, src := awkShort(s[1:], args, i, io)
			if why != "" {
				return why
			}
			sources += src
			i += skip
		default:
			if sources > 0 {
				return "" // the operands are files
			}
			return awkProgramProblem(a, io)
		}
	}
	return ""
}

// awkShort reads one cluster of awk's short options (without the '-') at
// args[i]: how many more words it takes, a reason to refuse, and whether
// it gave program text (-e).
func awkShort(cluster string, args []word, i int, io *awkIO) (skip int, why string, sources int) {
	for j := 0; j < len(cluster); j++ {
		c := cluster[j]
		if !strings.ContainsRune("fEilveFW", rune(c)) {
			continue
		}
		value, skip := cluster[j+1:], 0
		if value == "" {
			if i+1 >= len(args) {
				return 0, "", 0
			}
			value, skip = args[i+1].lit(), 1
			if !args[i+1].static() {
				return skip, "awk -" + string(c) + " " + args[i+1].text + " is only known at run time, so its program cannot be judged", 0
			}
		}
		switch {
		case c == 'f' || c == 'E' || c == 'i' || c == 'l':
			return skip, "awk -" + string(c) + " runs a program file, which cannot be judged", 0
		case c == 'W' && strings.HasPrefix(value, "e"):
			return skip, "awk -W " + value + " runs a program file, which cannot be judged", 0
		case c == 'e':
			return skip, awkTextProblem(value, io), 1
		}
		return skip, "", 0
	}
	return 0, "", 0
}

// longPrefixOf reports whether name is one of names or an abbreviation
// of one (getopt_long takes any unambiguous prefix) of at least 3 bytes.
func longPrefixOf(name string, names ...string) bool {
	for _, n := range names {
		if name == n || len(name) >= 3 && strings.HasPrefix(n, name) {
			return true
		}
	}
	return false
}

func awkProgramProblem(a word, io *awkIO) string {
	if !a.static() {
		return "awk's program " + a.text + " is only known at run time, so it cannot be judged"
	}
	return awkTextProblem(a.lit(), io)
}

// awkTextProblem scans awk program text outside its strings, regular
// expression literals and comments for what runs a command: system, a
// single '|' (a pipe; "||" is the logical or) and '@' (gawk's @load,
// @include and indirect calls such as @f() with f = "system"). The files
// it opens go to io: getline < FILE reads, print > FILE and >> FILE write.
func awkTextProblem(prog string, io *awkIO) string { //nolint:gocyclo // one scanner over awk's lexical states, as its grammar has them
	prev := byte('\n')         // the last significant byte: where a '/' starts a regexp
	printDepth, depth := -1, 0 // the paren depth a print statement started at
	for i := 0; i < len(prog); i++ {
		c := prog[i]
		switch {
		case c == '#':
			for i < len(prog) && prog[i] != '\n' {
				i++
			}
			prev, printDepth = '\n', -1
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ';' || c == '\n' || c == '{' || c == '}':
			printDepth = -1
		case c == '>' && printDepth == depth:
			if i+1 < len(prog) && prog[i+1] == '>' {
				i++
			}
			i = awkFileOperand(prog, i+1, &io.writes, io, "print > FILE")
		case c == '"':
			i = skipQuoted(prog, i, '"')
		case c == '/' && strings.IndexByte("\n(,~!{};&|=<>+-*%^?:[", prev) >= 0:
			i = skipQuoted(prog, i, '/')
		case c == '|':
			if i+1 < len(prog) && prog[i+1] == '|' {
				i++
				break
			}
			return "awk's | runs a command (print | \"cmd\", \"cmd\" | getline), which cannot be judged"
		case c == '@':
			return "awk's @ (gawk's @load, @include, indirect calls) runs what cannot be judged"
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			j := i
			for j < len(prog) && (prog[j] == '_' || 'a' <= prog[j] && prog[j] <= 'z' || 'A' <= prog[j] && prog[j] <= 'Z' || '0' <= prog[j] && prog[j] <= '9') {
				j++
			}
			switch prog[i:j] {
			case "system":
				return "awk's system() runs a command, which cannot be judged"
			case "ARGV", "ARGC":
				if awkAssigned(prog, j) || prev == ',' {
					return "awk's program changes " + prog[i:j] + ", so the files it reads are only known at run time"
				}
			case "print", "printf":
				printDepth = depth
			case "getline":
				if k := awkGetlineFrom(prog, j); k > 0 {
					j = awkFileOperand(prog, k, &io.reads, io, "getline < FILE") + 1
				}
			}
			i, c = j-1, 'a'
		}
		if c != ' ' && c != '\t' {
			prev = c
		}
	}
	return ""
}

// awkAssigned reports an assignment to the name ending at prog[j]
// (ARGV[1] = "f", ARGC++, ARGC += 1), its subscript skipped.
func awkAssigned(prog string, j int) bool {
	k := skipBlanks(prog, j)
	if k < len(prog) && prog[k] == '[' {
		for depth := 0; k < len(prog); k++ {
			if prog[k] == '[' {
				depth++
			} else if prog[k] == ']' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		k = skipBlanks(prog, k+1)
	}
	rest := prog[min(k, len(prog)):]
	if strings.HasPrefix(rest, "==") {
		return false
	}
	return strings.HasPrefix(rest, "=") || len(rest) > 1 && strings.IndexByte("+-*/%^", rest[0]) >= 0 && (rest[1] == '=' || rest[1] == rest[0])
}

// awkGetlineFrom returns the index after the '<' of `getline [var] <`
// starting at prog[j] (just after "getline"), 0 when none follows.
func awkGetlineFrom(prog string, j int) int {
	k := skipBlanks(prog, j)
	for k < len(prog) && (prog[k] == '_' || 'a' <= prog[k] && prog[k] <= 'z' || 'A' <= prog[k] && prog[k] <= 'Z' || '0' <= prog[k] && prog[k] <= '9') {
		k++
	}
	if k = skipBlanks(prog, k); k < len(prog) && prog[k] == '<' {
		return k + 1
	}
	return 0
}

func skipBlanks(prog string, k int) int {
	for k < len(prog) && (prog[k] == ' ' || prog[k] == '\t') {
		k++
	}
	return k
}

// awkFileOperand reads the file operand of an awk redirection at prog[k]:
// a string literal joins to, anything else sets io.problem. It returns the
// index of the operand's last byte.
func awkFileOperand(prog string, k int, to *[]word, io *awkIO, what string) int {
	k = skipBlanks(prog, k)
	if k < len(prog) && prog[k] == '"' {
		end := skipQuoted(prog, k, '"')
		if name := prog[k+1 : end]; !strings.Contains(name, "\\") {
			*to = append(*to, litWord(name))
			return end
		}
	}
	if io.problem == "" {
		io.problem = "awk's " + what + " names a file by an expression only known at run time (or with escapes), which cannot be judged; write it as a plain string"
	}
	return k - 1
}

// skipQuoted returns the index of the quote that closes the string or
// regexp starting at prog[i] (backslash escapes skipped), or the last
// index when it is not closed.
func skipQuoted(prog string, i int, q byte) int {
	for i++; i < len(prog); i++ {
		switch prog[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return len(prog) - 1
}

// tarProblem judges a tar command line: the options that run a program
// (see the file comment), as long options (abbreviated too), short
// options (-I, -F) or old-style letters in the first word (tar cIf …).
func tarProblem(args []word) string {
	const why = " runs a program, which cannot be judged"
	for i := 1; i < len(args); i++ {
		a := args[i]
		s := a.lit()
		if !a.static() {
			if strings.HasPrefix(a.text, "-") || i == 1 {
				return "tar " + a.text + " is only known at run time, so what it runs cannot be judged"
			}
			continue
		}
		switch {
		case s == "--":
			return ""
		case strings.HasPrefix(s, "--"):
			name, _, _ := strings.Cut(s[2:], "=")
			if name != "checkpoint" && longPrefixOf(name, "checkpoint-action", "use-compress-program", "to-command",
				"info-script", "new-volume-script", "rsh-command", "rmt-command") {
				return "tar " + s + why
			}
			if longPrefixOf(name, "absolute-names") {
				return "tar " + s + " keeps absolute member names: extracting writes anywhere, which cannot be judged"
			}
		case strings.HasPrefix(s, "-") || i == 1:
			for _, c := range strings.TrimPrefix(s, "-") {
				if c == 'I' || c == 'F' {
					return "tar -" + string(c) + " (in " + s + ")" + why
				}
				if c == 'P' {
					return "tar -P (in " + s + ") keeps absolute member names: extracting writes anywhere, which cannot be judged"
				}
				if strings.HasPrefix(s, "-") && strings.ContainsRune("fCTXbgHKLNV", c) {
					break // the rest of the word is the option's argument
				}
			}
		}
	}
	return ""
}

// npmCommand finds what npm exec (npm x) and npx run as a shell script:
// -c/--call SCRIPT. The options that name a shell or program for every
// script npm runs (--script-shell, --shell, --node-options, and the
// --userconfig/--globalconfig files that can set them) cannot be judged.
func npmCommand(base string, args []word) wrapped {
	exec, sub := base == "npx", base == "npx"
	w := wrapped{isWrapper: exec}
	for i := 1; i < len(args); i++ {
		a := args[i]
		l := a.lit()
		name, _, _ := strings.Cut(strings.TrimLeft(l, "-"), "=")
		switch {
		case l == "--":
			return w
		case !a.static() && strings.HasPrefix(a.text, "-"):
			w.problem = "npm option " + a.text + " is only known at run time, so what it runs cannot be judged"
			return w
		case strings.HasPrefix(l, "--") && contains([]string{"script-shell", "shell", "node-options", "userconfig", "globalconfig"}, name):
			w.problem = "npm " + l + " names a shell, program or config file npm uses to run every script, which cannot be judged"
			return w
		case !sub && a.static() && !strings.HasPrefix(l, "-"):
			sub, exec = true, l == "exec" || l == "x"
		case exec && (l == "-c" || l == "--call"):
			i += scriptOperand(&w, args, i, len(l))
		case exec && strings.HasPrefix(l, "--call="):
			scriptOperand(&w, args, i, len("--call"))
		}
		// npm exec CMD and npx CMD run CMD from $PATH when no package
		// provides it: deny rules see every tail of the words
		w.isWrapper = w.isWrapper || exec
	}
	return w
}

// runsOperands reports package-manager subcommands that run the command
// in their operands (uv run rm x, pnpm exec rm x): deny rules see every
// tail of their words. Allow rules still need the whole line.
func runsOperands(base string, args []word) bool {
	switch base {
	case "bunx", "uvx", "pnpx":
		return true
	}
	if len(args) < 2 || !args[1].static() {
		return false
	}
	sub := args[1].lit()
	switch base {
	case "pnpm", "yarn":
		return sub == "exec" || sub == "dlx"
	case "bun":
		return sub == "x" || sub == "exec" || sub == "run"
	case "uv", "poetry", "pipx", "conda", "pdm", "hatch", "rye", "pixi", "mamba", "micromamba":
		return sub == "run"
	}
	return false
}
