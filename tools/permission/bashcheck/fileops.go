package bashcheck

import (
	"path"
	"strings"
)

// File programs whose operands are files they create, change or remove:
// those operands are edits (edit rules, and the work tree's bounds), as an
// output redirection is. touch .github/x, cp x .github/, dd of=.github/x
// and tar -cf .github/x.tar write where an edit rule may deny it.

// unwrapFileProgram is what dd and the programs of fileOpArgs read and
// write; ok is false for other programs.
func unwrapFileProgram(base string, args []word) (wrapped, bool) {
	if base == "dd" {
		reads, writes := ddOperands(args)
		return wrapped{reads: reads, writes: writes}, true
	}
	if _, ok := fileOpArgs[base]; ok {
		return wrapped{writes: fileOpWrites(base, args)}, true
	}
	switch base {
	case "uniq":
		return wrapped{writes: uniqOutput(args)}, true
	case "shuf":
		return wrapped{writes: optionValues(args, "o", "output")}, true
	}
	return wrapped{}, false
}

// uniqOutput is the file uniq writes: its second operand (uniq IN OUT).
func uniqOutput(args []word) []word {
	var operands []word
	opts := true
	for i := 1; i < len(args); i++ {
		a := args[i]
		s := a.lit()
		switch {
		case !opts || !a.static() || !strings.HasPrefix(s, "-") || s == "-":
			operands = append(operands, a)
		case s == "--":
			opts = false
		case strings.HasPrefix(s, "--"):
			name, _, eq := strings.Cut(s[2:], "=")
			if !eq && (name == "skip-fields" || name == "skip-chars" || name == "check-chars") {
				i++
			}
		case strings.ContainsAny(s[len(s)-1:], "fsw"):
			i++ // -f N, -s N, -w N (attached values end in a digit)
		}
	}
	if len(operands) < 2 {
		return nil
	}
	return operands[1:2]
}

// optionValues returns the values of the short option c (-cV, -c V) and
// the long option name (--name=V, --name V).
func optionValues(args []word, c, name string) []word {
	var out []word
	for i := 1; i < len(args); i++ {
		a := args[i]
		s := a.lit()
		if !a.static() || !strings.HasPrefix(s, "-") {
			continue
		}
		if s == "--" {
			break
		}
		if v, ok := strings.CutPrefix(s, "--"+name+"="); ok {
			out = append(out, litWord(v))
			continue
		}
		if s == "--"+name || strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, c) {
			k := strings.Index(s, c)
			if s != "--"+name && k+1 < len(s) {
				out = append(out, litWord(s[k+1:]))
			} else if i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		}
	}
	return out
}

// fileOpArgs are, per program, the short options that take the next word
// (or the rest of their cluster) and the long ones that take a value.
var fileOpArgs = map[string]struct {
	short string
	long  []string
}{
	"touch":    {"rtd", []string{"reference", "date"}},
	"mkdir":    {"m", []string{"mode", "context"}},
	"rmdir":    {"", nil},
	"rm":       {"", nil},
	"unlink":   {"", nil},
	"truncate": {"sr", []string{"size", "reference"}},
	"shred":    {"ns", []string{"iterations", "size", "random-source"}},
	"cp":       {"tS", []string{"target-directory", "suffix", "context"}},
	"mv":       {"tS", []string{"target-directory", "suffix", "context"}},
	"ln":       {"tS", []string{"target-directory", "suffix"}},
	"install":  {"tSmogC", []string{"target-directory", "suffix", "mode", "owner", "group", "context", "strip-program"}},
}

// fileOpWrites returns the files a file program writes: every operand of
// touch, mkdir, rm…; the destination of cp, mv, ln and install (and the
// file each static source lands as when it is a directory); mv's sources,
// which it removes.
func fileOpWrites(base string, args []word) []word {
	spec, ok := fileOpArgs[base]
	if !ok {
		return nil
	}
	var operands []word
	var target *word
	opts := true
	for i := 1; i < len(args); i++ {
		a := args[i]
		s := a.lit()
		switch {
		case !opts || !a.static() || !strings.HasPrefix(s, "-") || s == "-":
			operands = append(operands, a)
		case s == "--":
			opts = false
		case strings.HasPrefix(s, "--"):
			name, value, eq := strings.Cut(s[2:], "=")
			if !contains(spec.long, name) {
				continue
			}
			if !eq && i+1 < len(args) {
				i++
				a = args[i]
			} else {
				a = litWord(value)
			}
			if name == "target-directory" {
				target = &a
			}
		default:
			for j := 1; j < len(s); j++ {
				if strings.IndexByte(spec.short, s[j]) < 0 {
					continue
				}
				v := litWord(s[j+1:])
				if j+1 == len(s) && i+1 < len(args) {
					i++
					v = args[i]
				}
				if s[j] == 't' {
					target = &v
				}
				break
			}
		}
	}
	switch base {
	case "cp", "mv", "ln", "install":
	default:
		return operands
	}
	sources := operands
	var writes []word
	if target == nil {
		if len(operands) < 2 {
			if base == "ln" && len(operands) == 1 && operands[0].static() {
				return []word{litWord(path.Base(operands[0].lit()))} // ln -s TARGET: a link named as TARGET here
			}
			return nil
		}
		target, sources = &operands[len(operands)-1], operands[:len(operands)-1]
	}
	writes = append(writes, *target)
	for _, src := range sources {
		if base == "mv" {
			writes = append(writes, src)
		}
		if src.static() && target.static() {
			writes = append(writes, litWord(strings.TrimSuffix(target.lit(), "/")+"/"+path.Base(src.lit())))
		}
	}
	return writes
}

// ddOperands returns the files dd reads (if=) and writes (of=).
func ddOperands(args []word) (reads, writes []word) {
	for _, a := range args[1:] {
		if !a.static() {
			continue
		}
		s := a.lit()
		if v, ok := strings.CutPrefix(s, "if="); ok {
			reads = append(reads, litWord(v))
		}
		if v, ok := strings.CutPrefix(s, "of="); ok {
			writes = append(writes, litWord(v))
		}
	}
	return reads, writes
}

// tarArchiveWrite returns the archive tar -c, -r, -u or -A writes (-f FILE,
// --file=FILE, fFILE in a cluster); "-" is standard output.
func tarArchiveWrite(args []word) []word {
	var file *word
	writing := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		s := a.lit()
		if !a.static() {
			continue
		}
		switch {
		case s == "--":
			i = len(args)
		case strings.HasPrefix(s, "--"):
			name, value, eq := strings.Cut(s[2:], "=")
			switch {
			case name == "create" || name == "append" || name == "update" || name == "concatenate" || name == "catenate":
				writing = true
			case longPrefixOf(name, "file") && len(name) >= 3:
				w := litWord(value)
				if !eq && i+1 < len(args) {
					i++
					w = args[i]
				}
				file = &w
			}
		case strings.HasPrefix(s, "-") || i == 1:
			cluster := strings.TrimPrefix(s, "-")
			for j := 0; j < len(cluster); j++ {
				c := cluster[j]
				if strings.IndexByte("cruA", c) >= 0 {
					writing = true
				}
				if c == 'f' {
					w := litWord(cluster[j+1:])
					if (j+1 == len(cluster) || !strings.HasPrefix(s, "-")) && i+1 < len(args) {
						i++
						w = args[i]
					}
					file = &w
					break
				}
				if strings.IndexByte("CTXbgHKLNV", c) >= 0 && strings.HasPrefix(s, "-") {
					break
				}
			}
		}
	}
	if !writing || file == nil || file.static() && file.lit() == "-" {
		return nil
	}
	return []word{*file}
}
