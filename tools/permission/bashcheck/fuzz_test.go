package bashcheck

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

func bashSeeds(f *testing.F) []string {
	f.Helper()
	seeds := []string{"git status", "ls; ls -la", "a && b || c | d", "echo $(id)", "sh -c 'rm x'",
		"find . -exec rm {} \\;", "env A=1 timeout 5 xargs -I{} rm {}", "cat <<EOF\n$(x)\nEOF", "echo > x",
		"f() { x; }", "for i in *; do echo \"$i\"; done", "case $x in a) b;; esac", "$'\\x41' b", "{ a; } > /dev/null",
		// attack kinds
		`echo hi >&"f"`, "builtin cd / && echo > f", "bash /dev/stdin <<< x", "echo ${x@P} ${!y}", `[ -v 'a[$(x)]' ]`,
		"git rebase -x 'rm x' HEAD", "git submodule foreach 'rm x'", "git config core.pager x", "tee -a f",
		"find . -fprint f", "su -c 'rm x'", "env -u X ls", "BASH_CMDS[ls]=/bin/rm", "read -r 'a[$(x)]'",
		"cd src && go test ./... 2>&1 | tail -20", "echo > /proc/self/cwd/x",
		// path arguments
		"rm -rf /tmp/x", "cat ../../etc/passwd", "cd src && cat ../x", "grep -r x ~/.ssh", "ls /tmp/*",
		"go test -coverprofile=/tmp/c.out", "cd $D; cat ../x", "cat < /etc/passwd",
		// protected paths
		"cat .env", "cat < .env", "cp x .git/hooks/pre-commit", "cat .e*", "cat {.env,x}", "cat */.env",
		"grep -r x --exclude-dir=.git .", "find . -path ./.git -prune -o -print", "git status", "ls -a"}
	data, err := os.ReadFile(filepath.Join("testdata", "bash.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if i := bytes.Index(line, []byte(`"command": "`)); i >= 0 {
			seeds = append(seeds, string(line[i+12:min(len(line), i+60)]))
		}
	}
	return seeds
}

// printStmts returns the canonical form of src, or false when it does not
// parse, holds no statement, or does not survive printing (the printer
// drops some odd bytes such as a lone \v).
func printStmts(src string) (string, bool) {
	parse := func(s string) (*syntax.File, bool) {
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
		return file, err == nil && len(file.Stmts) > 0
	}
	file, ok := parse(src)
	if !ok {
		return "", false
	}
	var buf bytes.Buffer
	if err := syntax.NewPrinter().Print(&buf, file); err != nil {
		return "", false
	}
	again, ok := parse(buf.String())
	if !ok || len(again.Stmts) != len(file.Stmts) {
		return "", false
	}
	return buf.String(), true
}

// FuzzCheckBash: the analysis never panics, a verdict is allowed only when
// every check is, a list "A\nB" is allowed only when A and B are, and
// under a broad bash allow with no external_directory rule a command is
// denied when a plain command in it has a literal absolute argument
// outside the work tree (adding an external_directory allow never turns
// an allowed verdict into a denial).
func FuzzCheckBash(f *testing.F) {
	for _, s := range bashSeeds(f) {
		f.Add(s, "ls -la")
	}
	wt := f.TempDir()
	p, err := permission.NewPaths(wt)
	if err != nil {
		f.Fatal(err)
	}
	rulesets := []Ruleset{open(), strict()}
	f.Fuzz(func(t *testing.T, a, b string) {
		if v := CheckPaths(broad(), p, a); v.Allowed {
			if arg := outsideArg(p, a); arg != "" {
				t.Fatalf("%q allowed with %q outside the work tree: %+v", a, arg, v.Checks)
			}
			if arg := protectedArg(a); arg != "" {
				t.Fatalf("%q allowed with %q naming .git or .env: %+v", a, arg, v.Checks)
			}
			if !CheckPaths(broad(Rule{Permission: ExternalDirectory, Pattern: "**", Action: Allow}), p, a).Allowed {
				t.Fatalf("%q allowed, but denied once external_directory is allowed", a)
			}
		}
		for _, rs := range rulesets {
			v := Check(rs, wt, a)
			if v.Allowed {
				if len(v.Checks) == 0 {
					t.Fatalf("%q allowed with no checks", a)
				}
				if _, denied := v.Denied(); denied {
					t.Fatalf("%q allowed with a denied check: %+v", a, v.Checks)
				}
			}
			pa, okA := printStmts(a)
			pb, okB := printStmts(b)
			if !okA || !okB {
				continue
			}
			if Check(rs, wt, pa+"\n"+pb).Allowed &&
				(!Check(rs, wt, pa).Allowed || !Check(rs, wt, pb).Allowed) {
				t.Fatalf("list %q allowed but a member is denied", pa+"\n"+pb)
			}
		}
	})
}

// protectedArg returns the first static argument word of a plain command
// in src that names a .git or .env* path by its text (not an option, nor
// the operand of an exclude option), "" when there is none.
func protectedArg(src string) string {
	return firstPlainArg(src, " find echo printf tee xargs command builtin exec eval source . cd pushd ",
		func(prev, lit string) bool {
			if lit == "" || strings.HasPrefix(lit, "-") || strings.HasPrefix(lit, "/") ||
				strings.ContainsAny(lit, "=\n") || excludeOption(prev) {
				return false
			}
			return permission.ProtectedKind(path.Clean(lit)) != ""
		})
}

// outsideArg returns a literal absolute argument outside the work tree of
// a command in src that runs no other command (no wrapper, shell, find,
// git, echo or printf), or "" when there is none.
func outsideArg(p permission.Paths, src string) string {
	return firstPlainArg(src, " find git echo printf tee xargs command builtin exec eval source . ",
		func(_, lit string) bool {
			if !strings.HasPrefix(lit, "/") || safeDevice(lit) {
				return false
			}
			t, err := p.Resolve(lit)
			return err == nil && !t.Inside
		})
}

// firstPlainArg walks the simple commands of src whose program is static and
// neither a wrapper, a shell nor one of skip (space-separated, with spaces
// at both ends), and returns the first static argument word for which pick
// (given the previous argument's text) is true; "" when none is, or when
// src does not parse or is out of bounds.
func firstPlainArg(src, skip string, pick func(prev, lit string) bool) string {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil || len(src) > MaxCommandBytes || strings.IndexByte(src, 0) >= 0 {
		return ""
	}
	found := ""
	syntax.Walk(file, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || found != "" || len(ce.Args) < 2 {
			return found == ""
		}
		prog := convertWord(ce.Args[0])
		if !prog.static() {
			return true
		}
		base := path.Base(prog.lit())
		if _, wraps := wrapperFor(base); wraps || isShell(base) || strings.Contains(skip, " "+base+" ") {
			return true
		}
		prev := ""
		for _, w := range ce.Args[1:] {
			cw := convertWord(w)
			lit, last := cw.lit(), prev
			prev = lit
			if cw.static() && pick(last, lit) {
				found = lit
				return false
			}
		}
		return true
	})
	return found
}
