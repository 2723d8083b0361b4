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

// awkProblem judges an awk command line: a program file (-f, gawk's
// --file/--exec/--include/--load, mawk's -W exec) cannot be judged, and
// the program text (the first operand, or gawk's -e/--source) must not
// run commands.
func awkProblem(args []word) string {
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
				return awkProgramProblem(args[i+1])
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
					if why := awkProgramProblem(args[i]); why != "" {
						return why
					}
				} else if why := awkTextProblem(value); why != "" {
					return why
				}
				sources++
			case longPrefixOf(name, "assign", "field-separator") && !hasValue:
				i++
			}
		case len(s) > 1 && s[0] == '-':
			skip, why, src := awkShort(s[1:], args, i)
			if why != "" {
				return why
			}
			sources += src
			i += skip
		default:
			if sources > 0 {
				return "" // the operands are files
			}
			return awkProgramProblem(a)
		}
	}
	return ""
}

// awkShort reads one cluster of awk's short options (without the '-') at
// args[i]: how many more words it takes, a reason to refuse, and whether
// it gave program text (-e).
func awkShort(cluster string, args []word, i int) (skip int, why string, sources int) {
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
			return skip, awkTextProblem(value), 1
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

func awkProgramProblem(a word) string {
	if !a.static() {
		return "awk's program " + a.text + " is only known at run time, so it cannot be judged"
	}
	return awkTextProblem(a.lit())
}

// awkTextProblem scans awk program text outside its strings, regular
// expression literals and comments for what runs a command: system, a
// single '|' (a pipe; "||" is the logical or) and '@' (gawk's @load,
// @include and indirect calls such as @f() with f = "system").
func awkTextProblem(prog string) string {
	prev := byte('\n') // the last significant byte: where a '/' starts a regexp
	for i := 0; i < len(prog); i++ {
		c := prog[i]
		switch {
		case c == '#':
			for i < len(prog) && prog[i] != '\n' {
				i++
			}
			prev = '\n'
			continue
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
			if prog[i:j] == "system" {
				return "awk's system() runs a command, which cannot be judged"
			}
			i, c = j-1, 'a'
		}
		if c != ' ' && c != '\t' {
			prev = c
		}
	}
	return ""
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
		case strings.HasPrefix(s, "-") || i == 1:
			for _, c := range strings.TrimPrefix(s, "-") {
				if c == 'I' || c == 'F' {
					return "tar -" + string(c) + " (in " + s + ")" + why
				}
				if strings.HasPrefix(s, "-") && strings.ContainsRune("fCTXbgHKLNV", c) {
					break // the rest of the word is the option's argument
				}
			}
		}
	}
	return ""
}
