package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// grepPatterns cover each search mode: pure literals, a required literal
// in a regexp, alternations, case folding, anchors, empty matches, CR and
// U+FFFD (which matches invalid UTF-8).
var grepPatterns = []string{
	"foobar", "alpha beta", "func", "nomatchanywhere", `func\s+\w+`, `fo+bar`, `(alpha|gamma) x`,
	`TODO|todo`, `(?i)todo`, `^return`, `nil $`, `x*`, `^$`, "é long", `\x{FFFD}`, `\r`, `beta\r?$`,
	`[a-c]eta`, `(foo)+bar`, `\bfoo\b`, `ga(mm)a{1}`, `.`, `(?i)FOObar`, `(?i)alpha BETA`, `(?i)ta\w+`, `(?i)é LONG`,
}

// TestIndexFold compares indexFold with a lower-casing bytes.Index on
// random inputs over a small alphabet (so candidates repeat).
func TestIndexFold(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	alpha := []byte("aAbB_1")
	for range 20000 {
		s := make([]byte, r.IntN(20))
		for i := range s {
			s[i] = alpha[r.IntN(len(alpha))]
		}
		lit := make([]byte, 1+r.IntN(3))
		for i := range lit {
			lit[i] = lowerASCII(alpha[r.IntN(len(alpha))])
		}
		if got, want := indexFold(s, lit), bytes.Index(bytes.ToLower(s), lit); got != want {
			t.Fatalf("indexFold(%q, %q) = %d, want %d", s, lit, got, want)
		}
	}
}

// TestGrepFoldKelvin: (?i)k also matches the Kelvin sign and (?i)s the
// long s, so the case-folded prefilter must not demand ASCII k or s.
func TestGrepFoldKelvin(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "\u212Aelvin\ntaſk\nnone\n"})
	for pat, want := range map[string]string{`(?i)kelvin`: "a.txt:1: \u212Aelvin", `(?i)task`: "a.txt:2: taſk"} {
		if res := run(t, tool(t, Env{WorkTree: dir}, "grep"), GrepParams{Pattern: pat}); res.Output != want {
			t.Errorf("grep %s: %q, want %q", pat, res.Output, want)
		}
	}
}

// TestGrepEngineMatchesPrevious compares grep, glob and list on random
// trees with the previous sequential implementation (walk_oracle_test.go):
// same output and metadata, including order, truncation and match limits.
// grep runs with one walker and with three against the same oracle
// answer, computed once with each distinct line matched once (the
// oracle was most of this test's time under -race, and the tools
// package came near go test's 10-minute timeout); each seed's tree is a
// parallel subtest.
func TestGrepEngineMatchesPrevious(t *testing.T) {
	t.Parallel()
	for seed := range 2 {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			genTree(t, dir, rand.New(rand.NewPCG(uint64(seed), 9)), 120+seed*150)
			for _, start := range []string{".", firstDir(t, dir)} {
				for _, pat := range grepPatterns {
					for _, inc := range []string{"", "*.{txt,md}", "d*/**"} {
						want, meta := oracleGrepWith(dir, start, inc, memoMatch(pat))
						for _, workers := range []int{1, 3} {
							checkGrep(t, dir, start, pat, inc, workers, want, meta)
						}
					}
				}
				for _, g := range []string{"**", "**/*.go", "*", "d*/**/f1*"} {
					checkGlob(t, dir, start, g)
				}
				res := run(t, tool(t, Env{WorkTree: dir}, "list"), ListParams{Path: start})
				want := oracleList(dir, start)
				if start == "." {
					want = "./" + strings.TrimPrefix(want, "./")
				}
				if got := res.Output; !strings.HasPrefix(got, want) {
					t.Errorf("list %s:\n%s", start, cmp.Diff(want, got))
				}
			}
		})
	}
}

// checkGrep runs grep with workers walkers and compares it with the
// oracle's output want and metadata meta.
func checkGrep(t *testing.T, dir, start, pat, inc string, workers int, want string, meta map[string]any) {
	t.Helper()
	raw, err := json.Marshal(GrepParams{Pattern: pat, Path: start, Include: inc})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool(t, Env{WorkTree: dir}, "grep").Run(withWalkWorkers(t.Context(), workers), Call{ID: "c", Input: raw})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != want || fmt.Sprint(res.Metadata) != fmt.Sprint(meta) {
		t.Errorf("grep %q in %s include %q (%d workers): (-previous +new)\n%s\nmetadata %v, previous %v",
			pat, start, inc, workers, cmp.Diff(want, res.Output), res.Metadata, meta)
	}
}

func checkGlob(t *testing.T, dir, start, pattern string) {
	t.Helper()
	res := run(t, tool(t, Env{WorkTree: dir}, "glob"), GlobParams{Pattern: pattern, Path: start})
	found, n := oracleGlob(dir, start, pattern)
	want := strings.Join(found, "\n")
	if len(found) == 0 {
		want = "No files found."
	}
	if !strings.HasPrefix(res.Output, want) || res.Metadata["count"] != n {
		t.Errorf("glob %q in %s: count %v, previous %d\n%s", pattern, start, res.Metadata["count"], n, cmp.Diff(want, res.Output))
	}
}

func firstDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			return e.Name()
		}
	}
	return "."
}

// TestGrepMatchesRipgrep compares the (path, line) pairs grep finds with
// ripgrep's on a random git repository, for patterns both dialects read
// alike and few enough matches to stay under the match limit.
func TestGrepMatchesRipgrep(t *testing.T) {
	t.Parallel()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) is not installed (apt-get install ripgrep; .ci/run installs it)")
	}
	dir := t.TempDir()
	genTree(t, dir, rand.New(rand.NewPCG(5, 5)), 400)
	if out, err := exec.CommandContext(t.Context(), "git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for _, pat := range []string{"foobar bar", "nomatchanywhere", `gamma\s+nil`, `^return x`, `(alpha|beta) TODO`, "é long é", `\{ \}`} {
		for _, inc := range []string{"", "*.go"} {
			res := run(t, tool(t, Env{WorkTree: dir}, "grep"), GrepParams{Pattern: pat, Include: inc})
			if res.Truncated {
				t.Fatalf("pattern %q matches too much for this comparison", pat)
			}
			args := []string{"-j1", "--sort", "path", "--hidden", "-g", "!.git", "--no-heading", "-n", "--color", "never", "--no-messages", "-e", pat}
			if inc != "" {
				args = append(args, "-g", inc)
			}
			cmd := exec.CommandContext(t.Context(), rg, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1")
			out, err := cmd.Output()
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
				err = nil // no match
			}
			if err != nil {
				t.Fatalf("rg %v: %v", args, err)
			}
			if got, want := linesOf(res.Output, ": "), rgPairs(out); !slices.Equal(got, want) {
				t.Errorf("grep %q include %q: (-rg +grep)\n%s", pat, inc, cmp.Diff(want, got))
			}
		}
	}
}

var pairRE = regexp.MustCompile(`^(.*?):(\d+):`)

// linesOf keeps "path:line" of each grep output line.
func linesOf(out, _ string) []string {
	var pairs []string
	for _, l := range strings.Split(out, "\n") {
		if m := pairRE.FindStringSubmatch(l); m != nil {
			pairs = append(pairs, m[1]+":"+m[2])
		}
	}
	return pairs
}

func rgPairs(out []byte) []string {
	var pairs []string
	for _, l := range bytes.Split(out, []byte("\n")) {
		if m := pairRE.FindSubmatch(l); m != nil {
			pairs = append(pairs, filepath.ToSlash(strings.TrimPrefix(string(m[1]), "./"))+":"+string(m[2]))
		}
	}
	return pairs
}

// TestWalkMatchesRipgrepFiles compares the regular files the search
// tools' walk yields (the walk of glob, grep and list), in order, with
// `rg --files --sort path` on random git repositories with nested
// .gitignore files, symlinks and FIFOs, from the root and from a
// subdirectory.
func TestWalkMatchesRipgrepFiles(t *testing.T) {
	t.Parallel()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) is not installed (apt-get install ripgrep; .ci/run installs it)")
	}
	for seed := range uint64(3) {
		dir := t.TempDir()
		genTree(t, dir, rand.New(rand.NewPCG(seed, 21)), 500)
		if out, err := exec.CommandContext(t.Context(), "git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		for _, start := range []string{".", firstDir(t, dir)} {
			var got []string
			err := walkTree(t.Context(), dir, start, func(e *walkEntry) error {
				if e.Type == 0 {
					got = append(got, e.Rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(t.Context(), rg, "--files", "--sort", "path", "--hidden", "-g", "!.git", "--no-messages", start)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("rg --files: %v", err)
			}
			var want []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if l != "" {
					want = append(want, strings.TrimPrefix(filepath.ToSlash(l), "./"))
				}
			}
			if len(want) < 50 && start == "." {
				t.Fatalf("seed %d: rg lists only %d files (walk %d): the tree is too small to compare", seed, len(want), len(got))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("seed %d, start %s: (-rg +walk)\n%s", seed, start, d)
			}
		}
	}
}
