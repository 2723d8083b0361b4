package swebench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// change is one kind of change a run can leave, made on a work tree.
type change struct {
	name  string
	base  map[string]string // files of the base commit
	edit  func(t *testing.T, wt string)
	input string // the instance_id input, "" for none
}

func changes() []change {
	return []change{
		{"modify", map[string]string{"a.txt": "one\ntwo\nthree\n"}, func(t *testing.T, wt string) {
			t.Helper()
			write(t, wt, "a.txt", "one\n2\nthree\n")
		}, "org__repo-1"},
		{"add-in-new-dir", map[string]string{"a.txt": "a\n"}, func(t *testing.T, wt string) {
			t.Helper()
			write(t, wt, "pkg/sub/new.go", "package sub\n")
		}, "org__repo-2"},
		{"delete", map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, func(t *testing.T, wt string) {
			t.Helper()
			rm(t, wt, "b.txt")
		}, ""},
		{"binary", map[string]string{"img.bin": "\x00\x01\x02\xff\xfe"}, func(t *testing.T, wt string) {
			t.Helper()
			write(t, wt, "img.bin", "\x00\x01\x03\xff\xfe\x00 more")
		}, ""},
		{"no-trailing-newline", map[string]string{"a.txt": "last line"}, func(t *testing.T, wt string) {
			t.Helper()
			write(t, wt, "a.txt", "last line\nand one more")
		}, ""},
		{"exec-bit", map[string]string{"run.sh": "#!/bin/sh\necho hi\n"}, func(t *testing.T, wt string) {
			t.Helper()
			if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"rename", map[string]string{"old/name.txt": "the same content\nover lines\n"}, func(t *testing.T, wt string) {
			t.Helper()
			write(t, wt, "new/name.txt", "the same content\nover lines\n")
			rm(t, wt, "old/name.txt")
		}, ""},
		{"unicode-and-spaces", map[string]string{"dir with space/é.txt": "café\n"}, func(t *testing.T, wt string) {
			t.Helper()
			write(t, wt, "dir with space/é.txt", "café crème\n")
			write(t, wt, "quote\"tab\t.txt", "ü\n")
		}, ""},
		{"crlf", map[string]string{"win.txt": "a\r\nb\r\n"}, func(t *testing.T, wt string) {
			t.Helper()
			write(t, wt, "win.txt", "a\r\nB\r\n")
		}, ""},
		{"symlink", map[string]string{"target.txt": "t\n"}, func(t *testing.T, wt string) {
			t.Helper()
			if err := os.Symlink("target.txt", filepath.Join(wt, "link")); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
}

// TestExportRoundTrip: for each kind of change, a real git repository at
// a base commit, the patch runner/snapshot makes of the change, a batch
// out dir holding it; the export's lines have exactly the harness's fields
// and types, carry the patch byte for byte, and each applies with `git
// apply --verbose` (the harness's first command) at its commit, giving the
// changed tree.
func TestExportRoundTrip(t *testing.T) {
	isolateGit(t)
	out := t.TempDir()
	m := batch.Manifest{Version: 1, Name: "swe"}
	var lines []string
	want := map[string]struct{ repo, commit, tree, patch string }{}
	for _, c := range changes() {
		id := "repo-" + c.name
		repo, commit, edited, patch := makeChange(t, c)
		r := batch.Repo{ID: id, Path: repo}
		inst := id
		if c.input != "" {
			r.Inputs = map[string]string{InstanceIDInput: c.input, "problem_statement": "fix it"}
			inst = c.input
		}
		m.Repos = append(m.Repos, r)
		writeBytes(t, filepath.Join(out, id, "changes.patch"), patch)
		lines = append(lines, resultLine(t, batch.RepoResult{ID: id, Repo: repo, Status: batch.StatusSuccess, FilesChanged: 1,
			PatchPath: id + "/changes.patch", Commit: commit, FinishedAt: time.Unix(0, 0).UTC()}))
		want[inst] = struct{ repo, commit, tree, patch string }{repo, commit, edited, string(patch)}
	}
	// Repositories without a patch, or with an empty one, are not exported.
	m.Repos = append(m.Repos, batch.Repo{ID: "no-change", Path: "x"}, batch.Repo{ID: "empty-patch", Path: "y"})
	lines = append(lines, resultLine(t, batch.RepoResult{ID: "no-change", Status: batch.StatusNoChange}),
		resultLine(t, batch.RepoResult{ID: "empty-patch", Status: batch.StatusTaskFailed, PatchPath: "empty-patch/changes.patch"}))
	writeBytes(t, filepath.Join(out, "empty-patch", "changes.patch"), nil)
	writeJSON(t, filepath.Join(out, batch.ManifestFile), m)
	writeBytes(t, filepath.Join(out, batch.ResultsFile), []byte(strings.Join(lines, "")))

	var buf bytes.Buffer
	res, err := Export(out, "runner/gpt-4.1", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if res.Written != len(want) || len(res.Skipped) != 0 {
		t.Fatalf("Export = %+v, want %d written", res, len(want))
	}
	preds := harnessRead(t, buf.Bytes())
	if len(preds) != len(want) {
		t.Fatalf("%d predictions, want %d", len(preds), len(want))
	}
	for _, p := range preds {
		w, ok := want[p.InstanceID]
		if !ok {
			t.Errorf("unexpected instance_id %q", p.InstanceID)
			continue
		}
		if p.ModelNameOrPath != "runner/gpt-4.1" {
			t.Errorf("%s: model_name_or_path %q", p.InstanceID, p.ModelNameOrPath)
		}
		if p.ModelPatch != w.patch {
			t.Errorf("%s: model_patch differs from the patch file", p.InstanceID)
		}
		applyAt(t, p, w.repo, w.commit, w.tree)
	}
	pythonRead(t, buf.Bytes(), len(want))
}

// harnessRead reads predictions as the harness does and checks that each
// has exactly the three fields, all strings. Source: SWE-bench
// (github.com/SWE-bench/SWE-bench at 7a21e05772954cc81471ae19d56f436cecf43c54),
// swebench/harness/utils.py get_predictions_from_file: a ".jsonl" file is
// `[json.loads(line) for line in f]`, each a dict with "instance_id";
// swebench/harness/run_evaluation.py reads pred["model_name_or_path"]
// (calling .replace("/", "__") on it) and pred["model_patch"], which it
// writes to patch.diff and applies with GIT_APPLY_CMDS[0], `git apply
// --verbose` (applyAt).
func harnessRead(t *testing.T, data []byte) []Prediction {
	t.Helper()
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("the predictions do not end with a newline: %q", data)
	}
	var out []Prediction
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var fields map[string]any
		if err := json.Unmarshal([]byte(line), &fields); err != nil {
			t.Fatalf("line %d: %v (the harness json.loads every line, blank ones too)", i+1, err)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range fields {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.Equal(keys, []string{"instance_id", "model_name_or_path", "model_patch"}) {
			t.Errorf("line %d has fields %v", i+1, keys)
		}
		for k, v := range fields {
			if _, ok := v.(string); !ok {
				t.Errorf("line %d: %s is %T, want a string", i+1, k, v)
			}
		}
		var p Prediction
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// pythonRead runs the harness's reading code (get_predictions_from_file
// for .jsonl, and the model_name_or_path.replace it does) in Python, when
// python3 is installed.
func pythonRead(t *testing.T, data []byte, want int) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 is not installed: the predictions are not read with Python's json")
		return
	}
	file := filepath.Join(t.TempDir(), "preds.jsonl")
	writeBytes(t, file, data)
	script := `import json, sys
with open(sys.argv[1], "r") as f:
    predictions = [json.loads(line) for line in f]
for pred in predictions:
    assert isinstance(pred, dict) and "instance_id" in pred
    assert isinstance(pred["model_patch"], str) and pred["model_patch"]
    pred.get("model_name_or_path", "None").replace("/", "__")
print(len(predictions))
`
	out, err := exec.CommandContext(t.Context(), py, "-c", script, file).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 could not read the predictions: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != fmt.Sprint(want) {
		t.Errorf("python3 read %s predictions, want %d", got, want)
	}
}

// applyAt clones repo, checks out commit, applies the prediction as the
// harness does and compares the tree with the one the run left.
func applyAt(t *testing.T, p Prediction, repo, commit, tree string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "checkout")
	gittest.Run(t, "", "clone", "-q", repo, dst)
	gittest.Run(t, dst, "checkout", "-q", commit)
	patchFile := filepath.Join(t.TempDir(), "patch.diff")
	writeBytes(t, patchFile, []byte(p.ModelPatch))
	cmd := exec.CommandContext(t.Context(), "git", "apply", "--verbose", patchFile)
	cmd.Dir = dst
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: git apply --verbose at %s failed: %v\n%s\npatch:\n%s", p.InstanceID, commit, err, out, p.ModelPatch)
		return
	}
	if got, want := treeOf(t, dst), treeOf(t, tree); got != want {
		t.Errorf("%s: the applied tree differs from the run's\ngot:\n%s\nwant:\n%s", p.InstanceID, got, want)
	}
}

func TestExportSkipsWhatJSONCannotCarry(t *testing.T) {
	out := t.TempDir()
	writeBytes(t, filepath.Join(out, "latin1", "changes.patch"), []byte("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-caf\xe9\n+caf\xe9!\n"))
	writeBytes(t, filepath.Join(out, batch.ResultsFile), []byte(
		resultLine(t, batch.RepoResult{ID: "latin1", Status: batch.StatusSuccess, PatchPath: "latin1/changes.patch"})+
			resultLine(t, batch.RepoResult{ID: "gone", Status: batch.StatusSuccess, PatchPath: "gone/changes.patch"})))
	var buf bytes.Buffer
	res, err := Export(out, "m", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if res.Written != 0 || buf.Len() != 0 || len(res.Skipped) != 2 {
		t.Fatalf("Export = %+v, output %q", res, buf.String())
	}
	if !strings.Contains(res.Skipped[0].Reason, "not valid UTF-8") || !strings.Contains(res.Skipped[1].Reason, "missing") {
		t.Errorf("reasons: %+v", res.Skipped)
	}
}

func TestExportDuplicateInstance(t *testing.T) {
	out := t.TempDir()
	m := batch.Manifest{Version: 1, Name: "swe", Repos: []batch.Repo{
		{ID: "a", Path: "a", Inputs: map[string]string{InstanceIDInput: "x__y-1"}},
		{ID: "b", Path: "b", Inputs: map[string]string{InstanceIDInput: "x__y-1"}},
	}}
	writeJSON(t, filepath.Join(out, batch.ManifestFile), m)
	var lines string
	for _, id := range []string{"a", "b"} {
		writeBytes(t, filepath.Join(out, id, "changes.patch"), []byte("diff --git a/f b/f\n"))
		lines += resultLine(t, batch.RepoResult{ID: id, Status: batch.StatusSuccess, PatchPath: id + "/changes.patch"})
	}
	writeBytes(t, filepath.Join(out, batch.ResultsFile), []byte(lines))
	var buf bytes.Buffer
	_, err := Export(out, "m", &buf)
	if !errors.Is(err, ErrDuplicateInstance) || !strings.Contains(err.Error(), "a and b") || buf.Len() != 0 {
		t.Fatalf("err = %v, output %q", err, buf.String())
	}
	if _, err := Export(out, "", &buf); err == nil || !strings.Contains(err.Error(), "--model-name") {
		t.Errorf("empty model name: %v", err)
	}
}

// makeChange commits c.base in a new repository, makes the change in a
// copy of its work tree and returns the repository, the base commit, the
// changed tree and runner/snapshot's patch between them.
func makeChange(t *testing.T, c change) (repo, commit, tree string, patch []byte) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "repo")
	gittest.Init(t, repo, c.base)
	commit = gittest.Run(t, repo, "rev-parse", "HEAD")
	tree = filepath.Join(t.TempDir(), "tree")
	gittest.Run(t, "", "clone", "-q", repo, tree)
	ctx := context.Background()
	s, err := snapshot.Open(ctx, snapshot.Options{WorkTree: tree, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.edit(t, tree)
	b, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.Patch(ctx, a, b, &buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() == 0 {
		t.Fatalf("%s: snapshot made an empty patch", c.name)
	}
	return repo, commit, tree, buf.Bytes()
}

// treeOf lists a work tree (without .git): each path with its mode and
// content, or a symlink's target.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			fmt.Fprintf(&b, "%s -> %s\n", rel, target)
			return err
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(&b, "%s %v %q\n", rel, info.Mode().Perm()&0o100, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func isolateGit(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	writeBytes(t, filepath.Join(root, filepath.FromSlash(rel)), []byte(content))
}

func rm(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

func writeBytes(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeBytes(t, path, data)
}

func resultLine(t *testing.T, r batch.RepoResult) string {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data) + "\n"
}
