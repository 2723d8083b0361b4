package bashcheck

import (
	"path"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// The go command's flags follow Go's flag package: -name or --name, a
// value attached with '=' or in the next word (never abbreviated, never
// clustered). GOFLAGS holds the same flags. Sources: `go help build`,
// `go help testflag`, cmd/go/internal/work/build.go.

// goFlagEffect is what one go flag does beyond building and testing.
type goFlagEffect int

const (
	goFlagPlain  goFlagEffect = iota
	goFlagExec                // the value is a program (and arguments) the go command runs
	goFlagWrite               // the value is a file or directory the go command writes
	goFlagRefuse              // cannot be judged (its value names more programs or files)
)

// goFlag classifies a go flag name (without dashes or value; test binary
// flags may carry their "test." prefix).
func goFlag(name string) goFlagEffect {
	switch strings.TrimPrefix(name, "test.") {
	case "exec", "toolexec", "vettool":
		return goFlagExec
	case "o", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir",
		"pkgdir", "fuzzcachedir", "gocoverdir", "testlogfile":
		return goFlagWrite
	case "overlay", "compiler", "gccgoflags":
		return goFlagRefuse
	}
	return goFlagPlain
}

// goFlagOption is one go flag met on a command line.
type goFlagOption struct {
	name  string
	value word // "" when the flag has no value here
	skip  int  // words consumed after the flag
}

// goFlagAt reads the flag at ws[i], nil when ws[i] is not a flag. A flag
// whose effect is not plain takes the next word as its value unless it is
// written with '='.
func goFlagAt(ws []word, i int) *goFlagOption {
	w := ws[i]
	if !w.static() || !strings.HasPrefix(w.lit(), "-") || w.lit() == "-" || w.lit() == "--" {
		return nil
	}
	name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(w.lit(), "-"), "-"), "=")
	opt := &goFlagOption{name: name}
	switch {
	case hasValue:
		opt.value = litWord(value)
	case goFlag(name) != goFlagPlain && i+1 < len(ws):
		opt.value, opt.skip = ws[i+1], 1
	}
	return opt
}

// ldflagsProblem explains why -ldflags (or -gcflags, -asmflags) cannot be
// judged: the linker runs the program -extld or -extar names.
func ldflagsProblem(name string, value word) string {
	if name != "ldflags" {
		return ""
	}
	if !value.static() {
		return "-ldflags only known at run time could name an external linker (-extld) for the go command to run"
	}
	for _, f := range []string{"-extld", "-extar", "-tmpdir"} {
		if strings.Contains(value.lit(), f) {
			return "-ldflags " + f + " names a program or directory for the linker, which cannot be judged"
		}
	}
	return ""
}

// goFlagsProblem judges GOFLAGS: "" when no flag in it runs or writes
// anything (GOFLAGS=-mod=mod).
func goFlagsProblem(flags []string) string {
	for _, f := range flags {
		name, value, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if goFlag(name) != goFlagPlain {
			return "the go flag " + f + " runs or writes something the check cannot follow"
		}
		if why := ldflagsProblem(name, litWord(value)); why != "" {
			return why
		}
	}
	return ""
}

// goChdir reads go's leading -C DIR, which changes to DIR first: the files
// the command names are relative to it. start is the index of the next word.
func goChdir(args []word) (dir string, start int, problem string) {
	switch l := args[1].lit(); {
	case (l == "-C" || l == "--C") && len(args) > 2:
		if !args[2].static() {
			return "", 0, "go -C with a directory only known at run time"
		}
		return args[2].lit(), 3, ""
	case strings.HasPrefix(l, "-C=") || strings.HasPrefix(l, "--C="):
		_, dir, _ = strings.Cut(l, "=")
		return dir, 2, ""
	}
	return "", 1, ""
}

// goCommand finds what a go command runs and writes besides building:
// -exec/-toolexec/-vettool programs (judged as commands, the test binary
// or tool as their last word), -o and profile files (edits), and the
// flags and subcommands that cannot be judged (-overlay, -ldflags=-extld,
// go env -w).
func goCommand(args []word) (w wrapped) {
	if len(args) < 2 || !args[0].static() || path.Base(args[0].lit()) != "go" {
		return w
	}
	sub := ""
	dir, start, problem := goChdir(args)
	if problem != "" {
		w.problem = problem
		return w
	}
	defer func() {
		for _, ws := range [][]word{w.writes, w.reads} {
			for i, f := range ws {
				if dir != "" && f.static() && !path.IsAbs(f.lit()) {
					ws[i] = litWord(path.Join(dir, f.lit()))
				}
			}
		}
	}()
	if w.reads, w.problem = goModulePaths(args[start:]); w.problem != "" {
		return w
	}
	for i := start; i < len(args); i++ {
		a := args[i]
		if sub == "" && a.static() && !strings.HasPrefix(a.lit(), "-") {
			sub = a.lit()
			if sub == "env" && goEnvWrites(args[i+1:]) {
				w.problem = "go env -w/-u changes the settings (GOFLAGS, GOTOOLCHAIN…) of every later go command, which cannot be judged"
				return w
			}
			continue
		}
		if a.static() && (a.lit() == "-args" || a.lit() == "--args") {
			break // the rest goes to the test binary
		}
		opt := goFlagAt(args, i)
		if opt == nil {
			continue
		}
		i += opt.skip
		if why := ldflagsProblem(opt.name, opt.value); why != "" {
			w.problem = why
			return w
		}
		switch goFlag(opt.name) {
		case goFlagExec:
			if !opt.value.static() {
				w.problem = "go -" + opt.name + " names a program only known at run time"
				return w
			}
			inner := fieldWords(opt.value.lit())
			if len(inner) == 0 {
				continue
			}
			binary := word{runes: []rune{permission.Hole}, text: "<binary>", opaque: true}
			w.inner = append(w.inner, innerCommand{args: append(inner, binary)})
		case goFlagWrite:
			w.writes = append(w.writes, opt.value)
		case goFlagRefuse:
			w.problem = "go -" + opt.name + " names files or programs the go command uses instead of the ones the check sees, which cannot be judged"
			return w
		}
	}
	return w
}

// goModulePaths finds the directories that go mod edit -replace, go work
// edit -use/-replace and go work use write into go.mod or go.work: every
// later build compiles the code there, so each is a read of the command
// (../../m leaves the work tree). A value only known at run time is a
// problem.
func goModulePaths(args []word) (dirs []word, problem string) {
	var subs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.lit()
		if len(subs) < 2 && a.static() && !strings.HasPrefix(l, "-") {
			subs = append(subs, l)
			continue
		}
		if len(subs) < 2 {
			continue
		}
		cmd := subs[0] + " " + subs[1]
		name, value, hasValue := strings.Cut(strings.TrimLeft(l, "-"), "=")
		switch {
		case cmd == "work use" && !strings.HasPrefix(l, "-"):
			dirs = append(dirs, a)
		case cmd != "mod edit" && cmd != "work edit", !strings.HasPrefix(l, "-"):
		case name == "replace" || cmd == "work edit" && name == "use":
			v := litWord(value)
			if !hasValue && i+1 < len(args) {
				i++
				v = args[i]
			}
			if !a.static() || !v.static() {
				return nil, "go " + cmd + " -" + name + " with a value only known at run time could point the build at any directory"
			}
			if d, ok := localModuleDir(name, v.lit()); ok {
				dirs = append(dirs, litWord(d))
			}
		}
	}
	return dirs, ""
}

// localModuleDir is the directory a -replace (old=new) or -use value
// names, when it names one: Go takes a replacement that is absolute or
// starts with ./ or ../ as a directory, anything else as a module path.
func localModuleDir(flag, value string) (string, bool) {
	if flag == "replace" {
		_, value, _ = strings.Cut(value, "=")
		if at := strings.LastIndexByte(value, '@'); at > 0 && !strings.ContainsAny(value[at:], "/") {
			value = value[:at]
		}
	}
	local := path.IsAbs(value) || value == "." || value == ".." || strings.HasPrefix(value, "./") || strings.HasPrefix(value, "../")
	return value, local || flag == "use"
}

// goEnvWrites reports `go env -w …` and `go env -u …`.
func goEnvWrites(rest []word) bool {
	for _, a := range rest {
		if l := a.lit(); a.static() && (l == "-w" || l == "-u" || l == "--w" || l == "--u") {
			return true
		}
	}
	return false
}

// fieldWords splits a flag value into words as the go command does
// (quoted.Split: spaces separate, '…' and "…" group).
func fieldWords(s string) []word {
	var out []word
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, litWord(cur.String()))
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, litWord(cur.String()))
	}
	return out
}
