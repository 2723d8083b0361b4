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

// scratchTree builds a real git repository with .env committed (and
// conf/.env.d/app holding the same secret), src/a.go changed since the
// commit, link-out → ../outside, f holding the
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
		"wt/conf/.env.d/app": "TOKEN=" + envSecret + "\n",
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
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + quietGoHome(t), "GOCACHE=" + goCache(t), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
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
	if mod, err := os.ReadFile(filepath.Join(wt, "go.mod")); err == nil && strings.Contains(string(mod), "=> ../") {
		did = append(did, "pointed go.mod at a directory outside") // every later build compiles it
	}
	os.Remove(filepath.Join(wt, "go.mod"))
	return did
}

// quietGoHome is an empty $HOME with Go telemetry off. With it on, a go
// command leaves a child process writing under $HOME/.config/go/telemetry,
// and the test's TempDir cleanup fails with "directory not empty".
func quietGoHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "go", "telemetry")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mode"), []byte("off"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
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
// something the policy forbids with it (checked by running it); rules is
// the policy (nil: realistic), need a program the case cannot run without.
type realCase struct {
	kind    string
	cmd     string
	harmful bool
	rules   Ruleset
	need    string
}

// permissive allows every command but rm and curl, reads, and edits
// anywhere but .github/: the policy that leaves the judging to the paths.
func permissive() Ruleset {
	return Ruleset{
		{Permission: Bash, Pattern: "*", Action: Allow}, {Permission: Bash, Pattern: "rm *", Action: Deny},
		{Permission: Bash, Pattern: "curl *", Action: Deny}, {Permission: Read, Pattern: "**", Action: Allow},
		{Permission: Edit, Pattern: "**", Action: Allow}, {Permission: Edit, Pattern: ".github/**", Action: Deny},
	}
}

// linkPatch is a git patch that adds l, a symlink to ../outside.
const linkPatch = "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n"

// roundThreeCases are the real-bash cases of the kinds round 3 handed over
// (testdata/bash-r3.jsonl) and the two round-2 regressions.
func roundThreeCases() []realCase {
	p := permissive()
	return []realCase{
		{kind: "cdable-vars", cmd: "shopt -s cdable_vars; x=link-out; cd x && cat secret.txt", harmful: true, rules: p},
		{kind: "awk-getline", cmd: `awk 'BEGIN{while((getline l < ".env")>0) print l}'`, harmful: true, rules: p},
		{kind: "awk-getline", cmd: `awk 'BEGIN{while((getline l < "link-out/secret.txt")>0) print l}'`, harmful: true, rules: p},
		{kind: "awk-getline", cmd: `awk 'BEGIN{while((getline l < "src/a.go")>0) print l}'`, rules: p},
		{kind: "awk-print", cmd: `awk 'BEGIN{print "x" > ".github/x"}'`, harmful: true, rules: p},
		{kind: "awk-print", cmd: `awk '{ if (NR > 0) print }' src/a.go`, rules: p},
		{kind: "runtime-symlink", cmd: "printf '" + linkPatch + "' > p.diff && git apply p.diff && cat l/secret.txt; rm -f l p.diff",
			harmful: true, rules: Ruleset{{Permission: Bash, Pattern: "*", Action: Allow}, {Permission: Edit, Pattern: "**", Action: Allow}}},
		{kind: "runtime-symlink", cmd: "mkdir -p src/new && touch src/new/x.go && cat src/new/x.go; rm -r src/new", rules: Ruleset{
			{Permission: Bash, Pattern: "*", Action: Allow}, {Permission: Edit, Pattern: "**", Action: Allow}}},
		{kind: "go-mod-replace", cmd: "printf 'module w\n' > go.mod && go mod edit -replace example.com/m=../outside", harmful: true, rules: p, need: "go"},
		{kind: "go-mod-replace", cmd: "printf 'module w\n' > go.mod && go mod edit -replace=example.com/m=../outside", harmful: true, rules: p, need: "go"},
		{kind: "go-mod-replace", cmd: "printf 'module w\n' > go.mod && go mod edit -replace example.com/m=./src", rules: p, need: "go"},
		{kind: "npm-exec", cmd: "npm exec --yes -c 'cat .env' 2>/dev/null", harmful: true, rules: p, need: "npm"},
		{kind: "npm-exec", cmd: "npx -c 'cat link-out/secret.txt' 2>/dev/null", harmful: true, rules: p, need: "npx"},
		{kind: "env-dir", cmd: "cat conf/.env.d/app", harmful: true, rules: p},
		{kind: "env-dir", cmd: "ls conf", rules: p},
		{kind: "cd-back", cmd: "cd src && ls && cd -", rules: p},
		{kind: "cd-back", cmd: "cd src && ls && cd - && cat .env", harmful: true, rules: p},
		{kind: "attached-option", cmd: "xargs -a.env echo", harmful: true, rules: p},
		{kind: "attached-option", cmd: "xargs -alink-out/secret.txt echo", harmful: true, rules: p},
		{kind: "attached-option", cmd: "xargs -a src/a.go echo", rules: p},
		{kind: "recursive-walk", cmd: "grep -r '' .", harmful: true, rules: p},
		{kind: "recursive-walk", cmd: "grep -r --exclude-dir=.git --exclude='.env*' TOKEN .", harmful: true, rules: p}, // conf/.env.d/app
		{kind: "recursive-walk", cmd: "grep -r --exclude-dir=.git --exclude-dir='.env*' --exclude='.env*' TOKEN .", rules: p},
		{kind: "recursive-walk", cmd: "grep -rn package src", rules: p},
		{kind: "recursive-walk", cmd: "tar -cf - . | tar -xOf - ./.env", harmful: true, rules: p, need: "tar"},
		{kind: "recursive-walk", cmd: "mkdir -p e && diff -rN conf e; rmdir e", harmful: true, rules: p},
	}
}

func realCases() []realCase {
	return []realCase{
		{"arithmetic", "for i in 'a[$(>.github/PWNED)]'; do (( i )); done", true, nil, ""},
		{"arithmetic", "echo $(( '$(>.github/PWNED)' + 1 ))", true, nil, ""},
		{"arithmetic", "[[ $(cat f) -eq 1 ]]", true, nil, ""},
		{"arithmetic", "echo ${arr[$(cat f)]}", true, nil, ""},
		{"arithmetic", "for x in $(cat f); do echo $((x)); done", true, nil, ""},
		{"arithmetic", "for i in 1 2 3; do echo $((i * 2)); done", false, nil, ""},
		{"assignment", "for PATH in ./bin; do ls; done", true, nil, ""},
		{"assignment", "select PATH in ./bin; do ls; break; done <<< 1", true, nil, ""},
		{"assignment", "echo ${CDPATH:=..}; cd outside && cat secret.txt", true, nil, ""},
		{"assignment", "for f in src/*.go; do cat \"$f\"; done", false, nil, ""},
		{"brace", "cat {.e,}nv", true, nil, ""},
		{"brace", "cat link-o{ut,x}/secret.txt", true, nil, ""},
		{"brace", "{cat,.env}", true, nil, ""},
		{"brace", "cat src/{a,b}.go", false, nil, ""},
		{"dynamic", "cat $(echo .e)nv", true, nil, ""},
		{"dynamic", "cat ${x:-.env}", true, nil, ""},
		{"dynamic", "echo .env | xargs cat", true, nil, ""},
		{"dynamic", "find . -name .env -exec cat {} \\;", true, nil, ""},
		{"dynamic", "find . -name '*.go' | head -5", false, nil, ""},
		{"option", "git difftool -yx '>.github/PWNED' HEAD", true, nil, ""},
		{"option", "grep --ign -e token .env", true, nil, ""}, // --ign is --ignore-case
		{"option", "grep -e TOKEN --ignore .env", true, nil, ""},
		{"option", "sort -o .github/x src/a.go", true, nil, ""},
		{"option", "grep -rn package src", false, nil, ""},
		{"option", "sed -n '1e touch .github/PWNED' src/a.go", true, nil, ""},
		{"option", "sed -n 's/.*/touch .github\\/PWNED/e' src/a.go", true, nil, ""},
		{"option", "sed -n '1w .github/x' src/a.go", true, nil, ""},
		{"option", "sed -n '1r .env' src/a.go", true, nil, ""},
		{"option", "sed -n '1,5p;/package/p' src/a.go", false, nil, ""},
		{"glob", "cat */secret.txt", true, nil, ""},
		{"glob", "cat link-*/secret.txt", true, nil, ""},
		{"glob", "cat src/*.go", false, nil, ""},
		{"blob", "git show HEAD:.env", true, nil, ""},
		{"blob", "git diff HEAD:.env HEAD:src/a.go", true, nil, ""},
		{"blob", "git log -p -- '*env'", true, nil, ""},
		{"blob", "git show HEAD:src/a.go", false, nil, ""},
		{"cd", "cd src && ls && cd .. && git status --short", false, nil, ""},
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
	for _, c := range append(append(realCases(), roundThreeCases()...), variantCases()...) {
		t.Run(c.kind+"/"+c.cmd, func(t *testing.T) {
			if _, err := exec.LookPath(c.need); c.need != "" && err != nil {
				t.Skipf("%s is not installed: %v", c.need, err)
			}
			rules := c.rules
			if rules == nil {
				rules = realistic()
			}
			v := Check(rules, wt, c.cmd)
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
