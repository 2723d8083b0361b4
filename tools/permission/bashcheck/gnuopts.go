package bashcheck

import (
	"path"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// GNU getopt_long grammar: short options cluster (-inr), a short option
// that takes an argument takes the rest of the word or the next word
// (-e PAT, -ePAT), a long option may be abbreviated to any unambiguous
// prefix (--ignore is --ignore-case), takes its argument after '=' or in
// the next word, and "--" ends the options. An exact name wins over
// prefixes; an ambiguous prefix makes the program fail.

// Roles of a GNU program's words.
const (
	roleOperand = iota // a file operand (or the pattern, see gnuSpec.pattern)
	roleOption         // an option or an option argument that names no file
	roleRead           // an option argument naming a file the program reads
	roleExclude        // an option argument naming files to leave out
	rolePattern        // the pattern operand: text, not a file
)

// gnuSpec is one program's option grammar.
type gnuSpec struct {
	shortArg     string         // short options that take an argument
	long         map[string]int // long options: -1 no argument, else the role of the argument
	shortArgRole map[byte]int   // roles of short option arguments (default roleOption)
	patternOpts  string         // short options that give the pattern (then no pattern operand)
	patternLong  []string
	pattern      bool // the first operand is a pattern unless a pattern option is given
}

// gnuSpecFor returns the grammar of a program the default rules cover.
func gnuSpecFor(base string) (gnuSpec, bool) {
	switch base {
	case "grep", "egrep", "fgrep":
		long := map[string]int{}
		for _, n := range []string{"basic-regexp", "byte-offset", "binary", "count", "dereference-recursive",
			"extended-regexp", "files-with-matches", "files-without-match", "fixed-strings", "help", "ignore-case",
			"no-ignore-case", "initial-tab", "line-buffered", "line-number", "line-regexp", "no-filename",
			"no-group-separator", "no-messages", "null", "null-data", "only-matching", "perl-regexp", "quiet",
			"recursive", "silent", "text", "version", "with-filename", "word-regexp", "invert-match"} {
			long[n] = -1
		}
		for _, n := range []string{"after-context", "before-context", "context", "binary-files", "devices",
			"directories", "group-separator", "label", "max-count", "regexp", "color", "colour"} {
			long[n] = roleOption
		}
		long["file"], long["exclude-from"] = roleRead, roleRead
		long["exclude"], long["include"], long["exclude-dir"] = roleExclude, roleExclude, roleExclude
		return gnuSpec{shortArg: "ABCDdefm", long: long, shortArgRole: map[byte]int{'f': roleRead},
			patternOpts: "ef", patternLong: []string{"regexp", "file"}, pattern: true}, true
	case "sed":
		long := map[string]int{"expression": roleOption, "file": roleRead, "line-length": roleOption}
		for _, n := range []string{"quiet", "silent", "debug", "posix", "regexp-extended", "separate", "sandbox",
			"unbuffered", "null-data", "zero-terminated", "follow-symlinks", "help", "version", "in-place"} {
			long[n] = -1
		}
		return gnuSpec{shortArg: "efl", long: long, shortArgRole: map[byte]int{'f': roleRead},
			patternOpts: "ef", patternLong: []string{"expression", "file"}, pattern: true}, true
	case "awk", "gawk", "mawk":
		long := map[string]int{"file": roleRead, "field-separator": roleOption, "assign": roleOption}
		return gnuSpec{shortArg: "fFv", long: long, shortArgRole: map[byte]int{'f': roleRead},
			patternOpts: "f", patternLong: []string{"file"}, pattern: true}, true
	}
	return gnuSpec{}, false
}

// gnuRoles gives each word of args[1:] its role under spec.
func gnuRoles(spec gnuSpec, args []word) []int {
	roles := make([]int, len(args)-1)
	patternGiven := false
	firstOperand := -1
	done := false
	for i := 1; i < len(args); i++ {
		a, r := args[i], &roles[i-1]
		s, optionStatic := optionText(a)
		switch {
		case done || !optionStatic || !strings.HasPrefix(s, "-") || s == "-":
			*r = roleOperand
			if firstOperand < 0 {
				firstOperand = i - 1
			}
		case s == "--":
			*r, done = roleOption, true
		case strings.HasPrefix(s, "--"):
			*r = roleOption
			name, _, hasValue := strings.Cut(s[2:], "=")
			full, argRole := gnuLong(spec, name)
			patternGiven = patternGiven || contains(spec.patternLong, full)
			if argRole < 0 {
				continue
			}
			if hasValue {
				*r = argRole
			} else if i+1 < len(args) {
				i++
				roles[i-1] = argRole
			}
		default:
			*r = roleOption
			for j := 1; j < len(s); j++ {
				c := s[j]
				patternGiven = patternGiven || strings.IndexByte(spec.patternOpts, c) >= 0
				if strings.IndexByte(spec.shortArg, c) < 0 {
					continue
				}
				role, ok := spec.shortArgRole[c]
				if !ok {
					role = roleOption
				}
				if j+1 < len(s) {
					*r = max(*r, role) // the argument is attached: the word is read when it names a file
				} else if i+1 < len(args) {
					i++
					roles[i-1] = role
				}
				break
			}
		}
	}
	if spec.pattern && !patternGiven && firstOperand >= 0 {
		roles[firstOperand] = rolePattern
	}
	return roles
}

// gnuLong resolves a long option name (exact, else a unique prefix) and
// the role of its argument (-1: none).
func gnuLong(spec gnuSpec, name string) (string, int) {
	if role, ok := spec.long[name]; ok {
		return name, role
	}
	// a unique prefix is that option; an ambiguous one makes the program
	// fail, but is taken as the most reaching of its options anyway
	match, role := name, -1
	for full, r := range spec.long {
		if strings.HasPrefix(full, name) && (match == name || reach(r) > reach(role)) {
			match, role = full, r
		}
	}
	return match, role
}

// gnuOwnWords drops the words of a GNU program that name no file (options,
// option arguments, the pattern) and marks the excluded ones; ok is false
// for programs without a grammar here.
func gnuOwnWords(prog string, args []word) (keep []word, exclude []bool, ok bool) {
	spec, ok := gnuSpecFor(path.Base(prog))
	if !ok || len(args) < 2 {
		return nil, nil, false
	}
	for i, role := range gnuRoles(spec, args) {
		w := args[i+1]
		switch role {
		case roleOperand, roleRead:
			keep = append(keep, w)
			exclude = append(exclude, false)
		case roleExclude:
			keep = append(keep, w)
			exclude = append(exclude, true)
		}
	}
	return keep, exclude, true
}

// reach orders argument roles by what they let a program touch.
func reach(role int) int {
	switch role {
	case roleRead:
		return 3
	case roleExclude:
		return 2
	case roleOption:
		return 1
	}
	return 0
}

// optionText is a word's text for option parsing: the literal, or for
// --name=VALUE and -xVALUE with an expansion in VALUE, the literal part
// before it (which is all getopt looks at); ok is false when the option
// itself is not static.
func optionText(w word) (string, bool) {
	if w.static() {
		return w.lit(), true
	}
	for i, r := range w.runes {
		if r == permission.Hole {
			prefix := string(w.runes[:i])
			if strings.HasPrefix(prefix, "--") && strings.Contains(prefix, "=") || len(prefix) > 2 && prefix[0] == '-' && prefix[1] != '-' {
				return prefix, true
			}
			return "", false
		}
	}
	return "", false
}
