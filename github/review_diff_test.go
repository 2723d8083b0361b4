package github

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

func TestParseHunks(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		want  []Hunk
		err   string
	}{
		{name: "one hunk", patch: "@@ -1,3 +1,4 @@ func main() {\n a\n-b\n+B\n+C\n c\n", want: []Hunk{{1, 4}}},
		{name: "two hunks", patch: "@@ -2,2 +2,2 @@\n x\n-y\n+Y\n@@ -20 +20,2 @@\n z\n+w", want: []Hunk{{2, 2}, {20, 2}}},
		{name: "new file", patch: "@@ -0,0 +1,2 @@\n+a\n+b\n", want: []Hunk{{1, 2}}},
		{name: "deleted file", patch: "@@ -1,2 +0,0 @@\n-a\n-b\n", want: []Hunk{{0, 0}}},
		{name: "no newline at end", patch: "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n", want: []Hunk{{1, 1}}},
		{name: "stripped empty context line", patch: "@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n", want: []Hunk{{1, 3}}},
		{name: "git diff headers", patch: "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", want: []Hunk{{1, 1}}},
		{name: "empty", patch: "", want: nil},
		{name: "short body", patch: "@@ -1,3 +1,3 @@\n a\n", err: "header says -3 +3 lines, body has -1 +1"},
		{name: "garbage in hunk", patch: "@@ -1,2 +1,2 @@\n a\n*b\n", err: `"*b" is not a context`},
		{name: "line after hunk", patch: "@@ -1 +1 @@\n-a\n+b\nstray\n", err: `"stray" is neither a hunk header`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHunks(tt.patch)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("hunks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseHunksAgreesWithGit: the lines git itself shows on the new side
// of a real diff (every '+' and context line, numbered by git's own
// --new-line-format) are exactly the lines the parsed hunks contain.
func TestParseHunksAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	dir := t.TempDir()
	var oldText, newText strings.Builder
	for i := 1; i <= 120; i++ {
		oldText.WriteString("line " + itoa(i) + "\n")
		switch {
		case i%17 == 0:
			newText.WriteString("changed " + itoa(i) + "\n")
		case i%29 == 0: // deleted
		case i%31 == 0:
			newText.WriteString("line " + itoa(i) + "\nadded after " + itoa(i) + "\n")
		default:
			newText.WriteString("line " + itoa(i) + "\n")
		}
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(oldText.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(newText.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	diff := gitDiff(t, dir, "--no-index", "a", "b")
	hunks, err := ParseHunks(diff)
	if err != nil {
		t.Fatal(err)
	}
	// git's line-by-line view of the new side: the new line numbers of
	// the lines in the hunks, from the diff itself counted independently.
	want := map[int]bool{}
	newLine := 0
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			m := hunkHeader.FindStringSubmatch(l)
			newLine = atoi(m[3])
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), newLine == 0:
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, " "):
			want[newLine] = true
			newLine++
		}
	}
	fd := FileDiff{Hunks: hunks}
	for line := 1; line <= 130; line++ {
		_, got := fd.Hunk(line, line)
		if got != want[line] {
			t.Errorf("line %d: in a hunk %v, git shows it %v", line, got, want[line])
		}
	}
	if len(want) == 0 || len(hunks) < 3 {
		t.Fatalf("diff too small to test: %d hunks\n%s", len(hunks), diff)
	}
}

func gitDiff(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", append([]string{"diff", "-U2"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil && len(out) == 0 { // --no-index exits 1 when the files differ
		t.Fatalf("git diff: %v", err)
	}
	return string(out)
}

func itoa(i int) string { return strconv.Itoa(i) }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestHunkContainsRange(t *testing.T) {
	f := FileDiff{Hunks: []Hunk{{10, 5}, {40, 3}}}
	tests := []struct {
		from, to int
		want     bool
	}{{10, 10, true}, {14, 14, true}, {15, 15, false}, {9, 9, false}, {10, 14, true}, {12, 41, false}, {40, 42, true}, {42, 40, false}}
	for _, tt := range tests {
		if _, got := f.Hunk(tt.from, tt.to); got != tt.want {
			t.Errorf("Hunk(%d, %d) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

// TestPullRequestFiles: every page is read; a file without a patch
// (binary) or with a patch that does not parse takes no comments.
func TestPullRequestFiles(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	path := "/repos/o/r/pulls/3/files"
	reg.Register(http.MethodGet, path, githubtest.Page([]any{
		map[string]any{"filename": "a.go", "status": "modified", "patch": "@@ -1,2 +1,3 @@\n a\n+b\n c"},
		map[string]any{"filename": "logo.png", "status": "added"},
	}, 1, 2)).WithQuery("per_page", "100")
	reg.Register(http.MethodGet, path, githubtest.Page([]any{
		map[string]any{"filename": "bad.go", "status": "modified", "patch": "@@ -1,9 +1,9 @@\n a\n"},
	}, 2, 2)).WithQuery("page", "2")
	got, err := PullRequestFiles(t.Context(), reg.Client(), "o", "r", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]FileDiff{
		"a.go":     {Path: "a.go", Status: "modified", Hunks: []Hunk{{1, 3}}},
		"logo.png": {Path: "logo.png", Status: "added", NoPatch: true},
		"bad.go":   {Path: "bad.go", Status: "modified", NoPatch: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func FuzzParseHunks(f *testing.F) {
	f.Add("@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n c\n")
	f.Add("@@ -0,0 +1 @@\n+x\n\\ No newline at end of file")
	f.Add("@@ -5,2 +5,0 @@\n-a\n-b\n@@ -9 +7 @@\n-c\n+d\n")
	f.Fuzz(func(t *testing.T, patch string) {
		hunks, err := ParseHunks(patch)
		if err != nil {
			return
		}
		for _, h := range hunks {
			if h.NewLines < 0 || h.NewStart < 0 {
				t.Fatalf("hunk %+v from %q", h, patch)
			}
			if h.NewLines > 0 && !h.Contains(h.NewStart, h.NewStart+h.NewLines-1) {
				t.Fatalf("hunk %+v does not contain its own lines", h)
			}
		}
	})
}
