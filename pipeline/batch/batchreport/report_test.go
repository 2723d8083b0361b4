package batchreport

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name; -update rewrites the file.
// testdata is the absolute path of the package's testdata dir (the tests
// change directory).
func golden(t *testing.T, testdata, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if *update {
		if err := os.MkdirAll(testdata, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pipeline/batch/batchreport -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (go test ./pipeline/batch/batchreport -run %s -update):\n%s", path, t.Name(), cmp.Diff(string(want), string(got)))
	}
}

// twoNights writes, under the current directory, night n1 (one merged
// dir) and night n2 (two unmerged shard dirs, one repository missing,
// earlier attempts in results.jsonl) and returns the dirs in order.
func twoNights(t *testing.T) []string {
	t.Helper()
	n1 := genBatch{Name: "nightly", Repos: 6, Seed: 1, Start: time.Date(2026, 11, 29, 3, 17, 0, 0, time.UTC)}.write(t, "nights/n1")
	n2 := genBatch{Name: "nightly", Repos: 6, Seed: 2, Shards: 2, Reruns: true, Drop: []int{5}}.write(t, "nights/n2")
	return append(n1, n2...)
}

// loadTwoNights loads twoNights in a temporary current directory and
// returns the report and the absolute path of testdata/.
func loadTwoNights(t *testing.T) (*Report, string) {
	t.Helper()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	rep, err := Load(t.Context(), twoNights(t), Options{LinkBase: "."})
	if err != nil {
		t.Fatal(err)
	}
	return rep, testdata
}

func TestGoldenMarkdown(t *testing.T) {
	rep, testdata := loadTwoNights(t)
	golden(t, testdata, "two-nights.md", []byte(Markdown(rep)))
}

func TestGoldenJSON(t *testing.T) {
	rep, testdata := loadTwoNights(t)
	out, err := Render(rep, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, testdata, "two-nights.json", out)
}

// TestShardsAreOneNight: the two shard dirs of n2 make one night, its
// manifest's repository without a result is missing, and the later lines
// of results.jsonl win.
func TestShardsAreOneNight(t *testing.T) {
	rep, _ := loadTwoNights(t)
	if len(rep.Nights) != 2 {
		t.Fatalf("nights = %d, want 2: %+v", len(rep.Nights), rep.Nights)
	}
	if got := strings.Join(rep.Dirs, " "); got != "nights/n2/shard-0 nights/n2/shard-1" {
		t.Errorf("latest night's dirs = %q", got)
	}
	if len(rep.Repos) != 6 || rep.Repos[5].Status != StatusMissing {
		t.Fatalf("repos = %+v", rep.Repos)
	}
	for _, r := range rep.Repos[:5] {
		want := "github.com-org-svc-000"
		if !strings.HasPrefix(r.ID, want) || r.Shard == "" {
			t.Errorf("repo %+v", r)
		}
	}
	if r := rep.Repos[3]; r.ErrorClass == "infra" && r.Error == "clone: connection reset" {
		t.Errorf("repo 3 kept the earlier attempt: %+v", r)
	}
}

func TestNotABatchDir(t *testing.T) {
	_, err := Load(t.Context(), []string{t.TempDir()}, Options{})
	if err == nil || !strings.Contains(err.Error(), "not a batch out dir") || !strings.Contains(err.Error(), "results.jsonl") {
		t.Fatalf("err = %v", err)
	}
}

func TestMalformedResults(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, batch.ResultsFile), "{\"id\":\"a\"}\nnot json\n{\"id\":\"b\"}\n")
	_, err := Load(t.Context(), []string{dir}, Options{})
	if err == nil || !strings.Contains(err.Error(), "results.jsonl:2") {
		t.Fatalf("err = %v", err)
	}
}

func TestCountDiff(t *testing.T) {
	patch := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n---- not a header\n++++ not a header\n c\n" +
		"diff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+one\n\\ No newline at end of file\n" +
		"diff --git a/z.png b/z.png\nGIT binary patch\nliteral 3\nKcmZ?wU;qF9\n\nliteral 0\nKcmV+b0RR6000031\n\n"
	got := CountDiff([]byte(patch))
	want := DiffStat{Files: 3, Additions: 2, Deletions: 1}
	if got != want {
		t.Errorf("CountDiff = %+v, want %+v", got, want)
	}
	// The file reader agrees, also past a line longer than its buffer.
	long := patch + "diff --git a/w b/w\n--- a/w\n+++ b/w\n@@ -1 +1,2 @@\n-" + strings.Repeat("x", 200<<10) + "\n+a\n+b\n"
	p := filepath.Join(t.TempDir(), "changes.patch")
	if err := os.WriteFile(p, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := CountDiffFile(p)
	if want := (DiffStat{Files: 4, Additions: 4, Deletions: 2}); err != nil || fromFile != want || CountDiff([]byte(long)) != want {
		t.Errorf("CountDiffFile = %+v (%v), CountDiff = %+v, want %+v", fromFile, err, CountDiff([]byte(long)), want)
	}
}

// unescapedLink is a Markdown link to javascript: whose "]" is not escaped.
var unescapedLink = regexp.MustCompile(`(^|[^\\])\]\(javascript:`)

// TestNightWithoutResults: a batch that finished nothing yet (a manifest,
// an empty results.jsonl) and a dir with results but no manifest both
// render in every format.
func TestNightWithoutResults(t *testing.T) {
	dir := t.TempDir()
	writeJSONFile(t, filepath.Join(dir, "started", batch.ManifestFile), batch.Manifest{Version: 1, Name: "n",
		Repos: []batch.Repo{{ID: "a", Path: "a"}, {ID: "b", Path: "b"}}})
	writeFile(t, filepath.Join(dir, "started", batch.ResultsFile), "")
	writeFile(t, filepath.Join(dir, "bare", batch.ResultsFile), `{"id":"x","status":"task_failed","patch_path":"../../etc/passwd","error":"<script>alert(1)</script> | [x](javascript:y)"}`+"\n")
	for _, d := range []string{"started", "bare"} {
		rep, err := Load(t.Context(), []string{filepath.Join(dir, d)}, Options{LinkBase: dir})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{FormatHTML, FormatMarkdown, FormatJSON} {
			out, err := Render(rep, f)
			if err != nil {
				t.Errorf("%s as %s: %v", d, f, err)
			}
			if f != FormatJSON && strings.Contains(string(out), "<script>alert") || f == FormatMarkdown && unescapedLink.MatchString(string(out)) {
				t.Errorf("%s as %s: the error text is not escaped:\n%s", d, f, out)
			}
		}
		switch d {
		case "started":
			if rep.Totals.Repositories != 2 || rep.Statuses[0] != (StatusCount{StatusMissing, 2}) || len(rep.Errors) != 1 {
				t.Errorf("started: %+v", rep)
			}
		case "bare":
			if len(rep.Repos) != 1 || rep.Repos[0].Links.Patch != "" || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "not inside the out dir") {
				t.Errorf("bare: a patch_path outside the out dir is linked: %+v", rep.Repos)
			}
		}
	}
	if _, err := Render(&Report{}, "pdf"); err == nil || !strings.Contains(err.Error(), "use html, markdown or json") {
		t.Errorf("unknown format: %v", err)
	}
}

// TestMixedBatches: out dirs of different batches (manifest names differ)
// still make a report, headed by the latest, with a problem (on stderr
// from the command) that names each batch and its dirs; one batch's
// nights have none.
func TestMixedBatches(t *testing.T) {
	t.Chdir(t.TempDir())
	a := genBatch{Name: "calc-sweep", Repos: 3, Seed: 1, Start: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)}.write(t, "a")
	b := genBatch{Name: "par-shards", Repos: 4, Seed: 2, Start: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}.write(t, "b")
	rep, err := Load(t.Context(), append(a, b...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "the out dirs hold 2 different batches: calc-sweep (a), par-shards (b); the trend compares them as nights of one, " +
		"and the report is headed by the latest, par-shards: give the out dirs of one batch"
	if rep.Name != "par-shards" || !slices.Contains(rep.Problems, want) {
		t.Errorf("name %q, problems %q; want %q", rep.Name, rep.Problems, want)
	}
	one, _ := loadTwoNights(t)
	for _, p := range one.Problems {
		if strings.Contains(p, "different batches") {
			t.Errorf("one batch's nights: %q", p)
		}
	}
}
