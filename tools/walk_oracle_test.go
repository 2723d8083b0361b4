package tools

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/seed43ef5acb/runner/internal/gitignore"
	"github.com/seed43ef5acb/runner/internal/treewalk"
)

// The previous implementation of glob, grep and list (a sequential
// os.ReadDir walk and a bufio.Scanner per file), kept as the oracle the
// parallel engine is compared with and the baseline of its benchmarks.

type oracleEntry struct {
	rel   string
	depth int
	dir   bool
	typ   os.FileMode
}

// oracleWalk lists the entries below start as the previous walker did.
func oracleWalk(root, start string) []oracleEntry {
	st, prefix := treewalk.StartRules(root, start, os.Getenv)
	var out []oracleEntry
	var dir func(rel string, depth int, st *gitignore.Stack)
	dir = func(rel string, depth int, st *gitignore.Stack) {
		abs := filepath.Join(root, filepath.FromSlash(rel))
		ents, err := os.ReadDir(abs)
		if err != nil {
			return
		}
		if b, err := gitignore.ReadRegular(filepath.Join(abs, ".gitignore")); err == nil {
			base := prefix
			if rel != "." {
				base += rel + "/"
			}
			st = st.Push(gitignore.ParseFile(b, base))
		}
		for _, e := range ents {
			if e.Name() == ".git" {
				continue
			}
			child := e.Name()
			if rel != "." {
				child = rel + "/" + e.Name()
			}
			if st.Excluded(prefix+child, e.IsDir()) {
				continue
			}
			out = append(out, oracleEntry{rel: child, depth: depth + 1, dir: e.IsDir(), typ: e.Type()})
			if e.IsDir() {
				dir(child, depth+1, st)
			}
		}
	}
	dir(start, 0, st)
	return out
}

// oracleGrep is the previous grep over a directory: output and metadata.
func oracleGrep(root, start, pattern, include string) (string, map[string]any) {
	return oracleGrepWith(root, start, include, regexp.MustCompile(pattern).MatchString)
}

// memoMatch is pattern's MatchString with each distinct line's answer
// kept: the same result (a regexp's match is a function of the text), for
// the equivalence tests, where genTree's large files repeat one line
// thousands of times and the oracle's per-line regexp under -race was
// most of the tools package's time. The benchmarks time oracleGrep as it
// was.
func memoMatch(pattern string) func(string) bool {
	re := regexp.MustCompile(pattern)
	seen := map[string]bool{}
	return func(s string) bool {
		m, ok := seen[s]
		if !ok {
			m = re.MatchString(s)
			seen[s] = m
		}
		return m
	}
}

// oracleGrepWith is oracleGrep with the line matcher given.
func oracleGrepWith(root, start, include string, match func(string) bool) (string, map[string]any) {
	var lines []string
	matches, files := 0, 0
	for _, e := range oracleWalk(root, start) {
		if e.dir || !e.typ.IsRegular() || !includes(include, start, e.rel) {
			continue
		}
		hit := false
		func() {
			f, err := os.OpenFile(filepath.Join(root, e.rel), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
			if err != nil {
				return
			}
			defer f.Close()
			if fi, err := f.Stat(); err != nil || fi.Size() > maxGrepFileBytes {
				return
			}
			if bin, err := isBinary(f); err != nil || bin {
				return
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64*1024), maxGrepFileBytes)
			for n := 1; sc.Scan(); n++ {
				text := sc.Text()
				if !match(text) {
					continue
				}
				hit = true
				matches++
				if matches > maxGrepMatches {
					return
				}
				if r := []rune(text); len(r) > maxGrepLineChars {
					text = string(r[:maxGrepLineChars]) + "…"
				}
				lines = append(lines, fmt.Sprintf("%s:%d: %s", e.rel, n, text))
			}
		}()
		if hit {
			files++
		}
		if matches > maxGrepMatches {
			break
		}
	}
	meta := map[string]any{"matches": min(matches, maxGrepMatches), "files": files}
	if len(lines) == 0 {
		return "No matches found.", meta
	}
	out := strings.Join(lines, "\n")
	if matches > maxGrepMatches {
		out += fmt.Sprintf("\n(more than %d matches; showing the first %d. Use a more specific pattern, path or include.)", maxGrepMatches, maxGrepMatches)
	}
	return out, meta
}

// oracleGlob is the previous glob: the shown paths and the count.
func oracleGlob(root, start, pattern string) ([]string, int) {
	var found []string
	n := 0
	for _, e := range oracleWalk(root, start) {
		if e.dir {
			continue
		}
		if ok, _ := doublestar.Match(pattern, relTo(start, e.rel)); !ok {
			continue
		}
		n++
		if len(found) < maxGlobResults {
			found = append(found, e.rel)
		}
		if n-len(found) >= maxCounted {
			break
		}
	}
	return found, n
}

// oracleList is the previous list output (without the truncation notes).
func oracleList(root, start string) string {
	var b strings.Builder
	b.WriteString(start + "/\n")
	n := 0
	for _, e := range oracleWalk(root, start) {
		if n >= maxListEntries {
			break
		}
		n++
		name := path.Base(e.rel)
		if e.dir {
			name += "/"
		}
		b.WriteString(strings.Repeat("  ", e.depth) + name + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// genTree writes a random tree of about n files under dir: nested
// directories, text in several shapes (CRLF, no final newline, long and
// invalid UTF-8 lines, empty files), binary files, symlinks, FIFOs and
// .gitignore files. Words come from a small vocabulary so patterns hit.
func genTree(t testing.TB, dir string, r *rand.Rand, n int) {
	t.Helper()
	words := []string{"alpha", "beta", "gamma", "func", "Func", "TODO", "todo", "x", "foo", "bar", "foobar", "é", "a\xff\xc3(", "\t", "  ", "{", "}", "return", "nil"}
	dirs := []string{""}
	for i := 0; i < n; i++ {
		if r.IntN(12) == 0 {
			d := path.Join(dirs[r.IntN(len(dirs))], fmt.Sprintf("d%d%s", i, []string{"", ".x", "-y", "_z"}[r.IntN(4)]))
			dirs = append(dirs, d)
			if r.IntN(4) == 0 {
				pats := []string{"*.log", "!keep.log", "gen/", "*.tmp", "/top*", "d1*/", "**/cache", "[!a]*.bak"}
				writeGen(t, dir, path.Join(d, ".gitignore"), []byte(pats[r.IntN(len(pats))]+"\n"+pats[r.IntN(len(pats))]+"\n"))
			}
			continue
		}
		d := dirs[r.IntN(len(dirs))]
		exts := []string{".go", ".txt", ".log", ".md", ".tmp", ".bak", ""}
		name := path.Join(d, fmt.Sprintf("f%d%s", i, exts[r.IntN(len(exts))]))
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
		switch k := r.IntN(40); {
		case k == 0:
			writeGen(t, dir, name, []byte("bin\x00alpha\nfunc\n"))
		case k == 1:
			if err := os.Symlink("../"+name, filepath.Join(dir, filepath.FromSlash(name))); err != nil && !os.IsExist(err) {
				t.Fatal(err)
			}
		case k == 2:
			_ = syscall.Mkfifo(filepath.Join(dir, filepath.FromSlash(name)), 0o644)
		case k == 3:
			writeGen(t, dir, name, nil)
		case k == 4:
			writeGen(t, dir, name, []byte(strings.Repeat("gamma alpha return nil\n", 2000+r.IntN(9000))+"foobar end\n"))
		default:
			var b strings.Builder
			eol := "\n"
			if r.IntN(6) == 0 {
				eol = "\r\n"
			}
			for range r.IntN(30) {
				for range r.IntN(12) {
					b.WriteString(words[r.IntN(len(words))] + " ")
				}
				if r.IntN(50) == 0 {
					b.WriteString(strings.Repeat("é long ", 100))
				}
				b.WriteString(eol)
			}
			s := b.String()
			if r.IntN(4) == 0 {
				s = strings.TrimSuffix(s, eol)
			}
			writeGen(t, dir, name, []byte(s))
		}
	}
}

func writeGen(t testing.TB, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
