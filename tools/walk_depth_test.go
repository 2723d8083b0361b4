package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// deepRules are read rules a run might have: everything but secrets/.
var deepRules = permission.Ruleset{
	{Permission: permission.Read, Pattern: "*", Action: permission.Allow},
	{Permission: permission.Read, Pattern: "secrets/**", Action: permission.Deny},
}

// genDeepChain makes a chain of depth nested directories named d below
// root; each level holds f.go ("level N"), x.o (ignored by the root's
// .gitignore) and, every 100 levels, a .gitignore ignoring skip.go and a
// skip.go. It returns the number of entries the tools walk (.o files and
// skip.go left out). Directories are made relative to open descriptors,
// so the chain may be deeper than PATH_MAX allows a path to be.
func genDeepChain(t testing.TB, root string, depth int) int {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	write := func(fd int, name, data string) {
		f, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if _, err := unix.Write(f, []byte(data)); err != nil {
			t.Fatal(err)
		}
		_ = unix.Close(f)
	}
	walked := 0
	for i := range depth {
		write(fd, "f.go", fmt.Sprintf("package p\n// level %d\n", i))
		write(fd, "x.o", "level object\n")
		walked++
		if i%100 == 50 {
			write(fd, ".gitignore", "skip.go\n")
			write(fd, "skip.go", fmt.Sprintf("// level %d skipped\n", i))
			walked++ // .gitignore itself is walked
		}
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		_ = unix.Close(fd)
		fd = next
		walked++
	}
	_ = unix.Close(fd)
	return walked
}

// BenchmarkDeepTree times grep and glob, guarded as in a run, over chains
// of 500, 1,000 and 2,000 directories; ns/entry (per walked entry) stays
// flat when the cost is linear whatever the depth:
//
//	go test -run '^$' -bench DeepTree -benchtime 3x ./tools/
func BenchmarkDeepTree(b *testing.B) {
	for _, depth := range []int{500, 1000, 2000} {
		dir := b.TempDir()
		entries := genDeepChain(b, dir, depth)
		for _, op := range []struct {
			tool   string
			params any
		}{
			{"grep", GrepParams{Pattern: "zqxj_nomatch"}},
			{"glob", GlobParams{Pattern: "**/*.go"}},
		} {
			b.Run(fmt.Sprintf("%s/depth%d", op.tool, depth), func(b *testing.B) {
				tl := Guard(tool(b, Env{WorkTree: dir}, op.tool), deepRules, dir)
				raw, err := json.Marshal(op.params)
				if err != nil {
					b.Fatal(err)
				}
				t0, c0 := time.Now(), selfCPU()
				for b.Loop() {
					res, err := tl.Run(b.Context(), Call{ID: "c", Input: raw})
					if err != nil || res.Denial != nil {
						b.Fatalf("%v %+v", err, res.Denial)
					}
				}
				n := float64(b.N) * float64(entries)
				b.ReportMetric(float64(time.Since(t0).Nanoseconds())/n, "ns/entry")
				b.ReportMetric((selfCPU()-c0)*1e9/n, "cpu-ns/entry")
			})
		}
	}
}

// TestDeepTreeMatchesWalkDir checks grep and glob, guarded as in a run, on
// a 1,000-deep chain against a plain filepath.WalkDir that applies the
// chain's ignore rules by name.
func TestDeepTreeMatchesWalkDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genDeepChain(t, dir, 1000)
	var goFiles, grepWant []string
	re := regexp.MustCompile(`level \d*37$`)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || strings.HasSuffix(name, ".o") || name == "skip.go" {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		if strings.HasSuffix(name, ".go") {
			goFiles = append(goFiles, rel)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for n, line := range strings.Split(string(b), "\n") {
			if re.MatchString(line) {
				grepWant = append(grepWant, fmt.Sprintf("%s:%d: %s", rel, n+1, line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(goFiles) != 1000 || len(grepWant) != 10 {
		t.Fatalf("oracle: %d .go files, %d grep lines; want 1000 and 10", len(goFiles), len(grepWant))
	}

	glob := run(t, Guard(tool(t, Env{WorkTree: dir}, "glob"), deepRules, dir), GlobParams{Pattern: "**/*.go"})
	if got := glob.Metadata["count"]; got != len(goFiles) {
		t.Errorf("glob count = %v, want %d", got, len(goFiles))
	}
	gotGlob := strings.Split(glob.Output, "\n")
	if len(gotGlob) < maxGlobResults || !slices.Equal(gotGlob[:maxGlobResults], goFiles[:maxGlobResults]) {
		t.Errorf("glob paths differ from WalkDir's:\n got %.300q\nwant %.300q", gotGlob, goFiles[:maxGlobResults])
	}

	grep := run(t, Guard(tool(t, Env{WorkTree: dir}, "grep"), deepRules, dir), GrepParams{Pattern: re.String()})
	if got := strings.Split(grep.Output, "\n"); !slices.Equal(got, grepWant) {
		t.Errorf("grep output differs from WalkDir's:\n got %.300q\nwant %.300q", got, grepWant)
	}
}
