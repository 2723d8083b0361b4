package bashcheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realistic is the policy of the attack trial: reads and
// builds allowed, edits anywhere but .github/.
func realistic() Ruleset {
	rs := Ruleset{}
	for _, p := range []string{"go test *", "go build *", "go vet *", "git diff*", "git log*", "git show*", "git status*",
		"cat *", "grep *", "echo *", "ls *", "head *", "tail *", "wc *", "find *", "xargs *", "sort *", "cd *",
		"printf *", "true", "sed -n *"} {
		rs = append(rs, Rule{Permission: Bash, Pattern: p, Action: Allow})
	}
	return append(rs, Rule{Permission: Read, Pattern: "**", Action: Allow}, Rule{Permission: Edit, Pattern: "**", Action: Allow},
		Rule{Permission: Edit, Pattern: ".github/**", Action: Deny})
}

// Markers the scratch tree holds: a command that prints one, or creates
// .github/PWNED or .github/x (edits the policy denies), did something the
// realistic policy does not allow.
const (
	envSecret     = "secret-env"     // in .env (committed too)
	outsideSecret = "OUTSIDE-SECRET" // in ../outside/secret.txt, reached through link-out
)

// scratchTree builds a real git repository with .env committed, src/a.go
// changed since the commit, link-out → ../outside, f holding the
// arithmetic payload a[$(>.github/PWNED)], bin/ls a program that creates
// .github/PWNED,
// and an empty .github/.
func scratchTree(t testing.TB) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	touch, err := exec.LookPath("touch")
	if err != nil {
		t.Skipf("touch is not installed: %v", err)
	}
	base := t.TempDir()
	wt := filepath.Join(base, "wt")
	files := map[string]string{
		"wt/.env": "TOKEN=" + envSecret + "\n", "wt/src/a.go": "package a\n", "outside/secret.txt": outsideSecret + "\n",
		"wt/f": "a[$(>.github/PWNED)]\n", "wt/bin/ls": "#!/bin/sh\n" + touch + " .github/PWNED\n", "wt/.github/README": "ci\n",
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside", filepath.Join(wt, "link-out")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		cmd := exec.CommandContext(context.Background(), git, args...)
		cmd.Dir = wt
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, "src/a.go"), []byte("package a // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return wt
}

// effects runs command with real bash in wt and says what it did that the
// policy forbids: printed a secret, created .github/PWNED, wrote into .github/.
func effects(t *testing.T, bash, wt, command string) []string {
	t.Helper()
	for _, p := range []string{filepath.Join(wt, ".github", "PWNED"), filepath.Join(wt, ".github", "x")} {
		os.Remove(p)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", command)
	cmd.Dir = wt
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GOCACHE=" + goCache(t), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // many attacks exit non-zero after doing their harm
	var did []string
	for _, secret := range []string{envSecret, outsideSecret} {
		if strings.Contains(out.String(), secret) {
			did = append(did, "printed "+secret)
		}
	}
	for _, p := range []string{".github/PWNED", ".github/x"} {
		if _, err := os.Lstat(filepath.Join(wt, p)); err == nil {
			did = append(did, "created "+p)
		}
	}
	return did
}

// goCache is a shared build cache for the go commands the cases run.
func goCache(t *testing.T) string {
	t.Helper()
	if c := os.Getenv("GOCACHE"); c != "" {
		return c
	}
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOCACHE").Output()
	if err != nil {
		return t.TempDir()
	}
	return strings.TrimSpace(string(out))
}

// realCase is one command of a kind: harmful says whether real bash does
// something the policy forbids with it (checked by running it).
type realCase struct {
	kind    string
	cmd     string
	harmful bool
}

func realCases() []realCase {
	return []realCase{
		{"arithmetic", "for i in 'a[$(>.github/PWNED)]'; do (( i )); done", true},
		{"arithmetic", "echo $(( '$(>.github/PWNED)' + 1 ))", true},
		{"arithmetic", "[[ $(cat f) -eq 1 ]]", true},
		{"arithmetic", "echo ${arr[$(cat f)]}", true},
		{"arithmetic", "for x in $(cat f); do echo $((x)); done", true},
		{"arithmetic", "for i in 1 2 3; do echo $((i * 2)); done", false},
		{"assignment", "for PATH in ./bin; do ls; done", true},
		{"assignment", "select PATH in ./bin; do ls; break; done <<< 1", true},
		{"assignment", "echo ${CDPATH:=..}; cd outside && cat secret.txt", true},
		{"assignment", "for f in src/*.go; do cat \"$f\"; done", false},
		{"brace", "cat {.e,}nv", true},
		{"brace", "cat link-o{ut,x}/secret.txt", true},
		{"brace", "{cat,.env}", true},
		{"brace", "cat src/{a,b}.go", false},
		{"dynamic", "cat $(echo .e)nv", true},
		{"dynamic", "cat ${x:-.env}", true},
		{"dynamic", "echo .env | xargs cat", true},
		{"dynamic", "find . -name .env -exec cat {} \\;", true},
		{"dynamic", "find . -name '*.go' | head -5", false},
		{"option", "git difftool -yx '>.github/PWNED' HEAD", true},
		{"option", "grep --ign -e token .env", true}, // --ign is --ignore-case
		{"option", "grep -e TOKEN --ignore .env", true},
		{"option", "sort -o .github/x src/a.go", true},
		{"option", "grep -rn package src", false},
		{"option", "sed -n '1e touch .github/PWNED' src/a.go", true},
		{"option", "sed -n 's/.*/touch .github\\/PWNED/e' src/a.go", true},
		{"option", "sed -n '1w .github/x' src/a.go", true},
		{"option", "sed -n '1r .env' src/a.go", true},
		{"option", "sed -n '1,5p;/package/p' src/a.go", false},
		{"glob", "cat */secret.txt", true},
		{"glob", "cat link-*/secret.txt", true},
		{"glob", "cat src/*.go", false},
		{"blob", "git show HEAD:.env", true},
		{"blob", "git diff HEAD:.env HEAD:src/a.go", true},
		{"blob", "git log -p -- '*env'", true},
		{"blob", "git show HEAD:src/a.go", false},
		{"cd", "cd src && ls && cd .. && git status --short", false},
	}
}

// TestRealBash runs every kind's cases with real bash in a scratch tree:
// each harmful case must really do harm (else the case proves nothing)
// and be denied; each harmless one must do none and be allowed.
func TestRealBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("bash is not installed: %v", err)
	}
	wt := scratchTree(t)
	for _, c := range realCases() {
		t.Run(c.kind+"/"+c.cmd, func(t *testing.T) {
			v := Check(realistic(), wt, c.cmd)
			did := effects(t, bash, wt, c.cmd)
			switch {
			case c.harmful && len(did) == 0:
				t.Errorf("real bash did nothing forbidden with %q: the case is wrong", c.cmd)
			case !c.harmful && len(did) > 0:
				t.Errorf("real bash %v with %q, a case meant to be harmless", did, c.cmd)
			}
			if len(did) > 0 && v.Allowed {
				t.Errorf("allowed, but real bash %v: %+v", did, v.Checks)
			}
			if !c.harmful && !v.Allowed {
				t.Errorf("harmless command denied: %s", v.Reason)
			}
		})
	}
}

// Grammar pieces FuzzRealBash builds commands from: programs the realistic
// policy allows, and the word fragments of every kind (brace expansion,
// expansions, arithmetic, globs, blobs, options, cd, lists).
var (
	fuzzPrograms = []string{"cat", "grep -e TOKEN", "grep --ign -e token", "head -1", "wc -c", "ls", "git show",
		"git log -p --", "sort -o", "echo", "for x in", "for PATH in", "echo $((", "[[", "find . -name", "xargs cat", "cd"}
	fuzzFragments = []string{".e", "nv", ".env", "{.e,}", "{n,x}", "{a,b}", "$(echo .e)", "${x:-.e}", "$x", "*", "?", "[e]",
		"/", "link-out", "src", "..", "HEAD:", ":", "'", "\"", "$((1))", "-", "--ign", "-e", " ", "a[$(>.github/PWNED)]",
		"$(( y ))", "x=", "; ", " && ", "cd src", "cd ..", "f", "$(cat f)", " -eq 1 ]]", "))", "; do cat $x; done",
		"./bin", "; do ls; done", " | ", "-yx", ".github/x", "secret.txt", "a.go", "-exec cat {} \\;"}
)

// fuzzCommand turns bytes into a command: the first picks a program, each
// next one a fragment.
func fuzzCommand(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(fuzzPrograms[int(data[0])%len(fuzzPrograms)])
	b.WriteByte(' ')
	for _, c := range data[1:min(len(data), 24)] {
		b.WriteString(fuzzFragments[int(c)%len(fuzzFragments)])
	}
	return b.String()
}

// FuzzRealBash: a command built from the grammars of every kind that the
// check allows under the realistic policy does nothing forbidden when real
// bash runs it (prints no secret, writes nothing under .github/). CI runs
// only the seeds; `go test -fuzz FuzzRealBash -fuzztime 20s` explores.
func FuzzRealBash(f *testing.F) {
	index := func(list []string, s string) byte {
		for i, v := range list {
			if v == s {
				return byte(i)
			}
		}
		f.Fatalf("%q is not a fragment", s)
		return 0
	}
	seed := func(prog string, frags ...string) {
		data := []byte{index(fuzzPrograms, prog)}
		for _, fr := range frags {
			data = append(data, index(fuzzFragments, fr))
		}
		f.Add(data)
	}
	seed("cat", "{.e,}", "nv")
	seed("cat", "$(echo .e)", "nv")
	seed("cat", "*", "/", "secret.txt")
	seed("cat", "src", "/", "*")
	seed("git show", "HEAD:", ".env")
	seed("grep --ign -e token", ".env")
	seed("for x in", "$(cat f)", "; do cat $x; done")
	seed("for PATH in", "./bin", "; do ls; done")
	seed("echo $((", "$(( y ))", "))")
	seed("[[", "$(cat f)", " -eq 1 ]]")
	seed("cd", "src", " && ", "cd ..")
	seed("find . -name", ".env", " ", "-exec cat {} \\;")
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skipf("bash is not installed: %v", err)
	}
	judged := scratchTree(f) // the same layout as every fresh tree a command runs in
	f.Fuzz(func(t *testing.T, data []byte) {
		cmd := fuzzCommand(data)
		if v := Check(realistic(), judged, cmd); v.Allowed {
			if did := effects(t, bash, scratchTree(t), cmd); len(did) > 0 {
				t.Fatalf("%q allowed, but real bash %v: %+v", cmd, did, v.Checks)
			}
		}
	})
}
