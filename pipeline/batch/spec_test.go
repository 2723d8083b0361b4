package batch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLoadSpecValid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "tasks", "fix.yaml"), "version: 1\n")
	write(t, filepath.Join(dir, "repos.txt"), "# fleet\n\nhttps://github.com/org/b.git v2\n  ../elsewhere/c\n")
	path := filepath.Join(dir, "batch.yaml")
	write(t, path, `version: 1
name: fleet
task: tasks/fix.yaml
repos:
  - url: https://github.com/org/a
    ref: main
    inputs: {package: ./..., retries: 3, verbose: true}
  - path: local/a
    id: custom
  - git@github.com:org/d.git
repos_file: repos.txt
concurrency: 4
clone: {depth: 0}
limits: {timeout: 20m, max_cost_usd: 1.5, total_max_cost_usd: 40}
retries: 1
`)
	s, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Path: path, Dir: dir, Version: 1, Name: "fleet",
		Task: TaskRef{Path: filepath.Join(dir, "tasks", "fix.yaml"), Name: filepath.Join(dir, "tasks", "fix.yaml")},
		Repos: []RepoSpec{
			{URL: "https://github.com/org/a", Ref: "main", Inputs: map[string]string{"package": "./...", "retries": "3", "verbose": "true"}, Pos: path + ":5:5",
				What: "repos[0]", InputsPos: path + ":7:13", InputPos: map[string]InputPos{
					"package": {path + ":7:14", path + ":7:23"}, "retries": {path + ":7:30", path + ":7:39"}, "verbose": {path + ":7:42", path + ":7:51"}}},
			{Path: "local/a", ID: "custom", Pos: path + ":8:5", What: "repos[1]"},
			{URL: "git@github.com:org/d.git", Pos: path + ":10:5", What: "repos[2]"},
			{URL: "https://github.com/org/b.git", Ref: "v2", Pos: filepath.Join(dir, "repos.txt") + ":3:1", What: "repos_file line 3"},
			{Path: "../elsewhere/c", Pos: filepath.Join(dir, "repos.txt") + ":4:3", What: "repos_file line 4"},
		},
		ReposFile: "repos.txt", Concurrency: 4, Clone: CloneSpec{Depth: 0},
		Limits:  Limits{Timeout: 20 * time.Minute, MaxCostUSD: 1.5, TotalMaxCostUSD: 40},
		Retries: 1,
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreUnexported(Spec{})); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	for key, want := range map[string]string{"task": path + ":3:7", "limits.timeout": path + ":14:19",
		"limits.max_cost_usd": path + ":14:38", "limits.total_max_cost_usd": path + ":14:63", "retries": ""} {
		if got := s.Position(key); got != want {
			t.Errorf("Position(%q) = %q, want %q", key, got, want)
		}
	}
	ids := manifestIDs(t, s)
	wantIDs := []string{"github.com-org-a-main", "custom", "github.com-org-d", "github.com-org-b-v2", "elsewhere-c"}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}

func TestLoadSpecDefaultsAndInline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "b.yaml")
	write(t, path, "version: 1\nname: x\ntask:\n  version: 1\n  name: t\n  prompt: hi\n"+
		"repos:\n  - {path: a, inputs: &common {level: 2}}\n  - {path: b, inputs: *common}\n")
	s, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Concurrency != DefaultConcurrency || s.Clone.Depth != DefaultDepth || s.Retries != DefaultRetries {
		t.Errorf("defaults: %+v", s)
	}
	if s.Repos[1].Inputs["level"] != "2" {
		t.Errorf("inputs through an alias: %v", s.Repos[1].Inputs)
	}
	if s.Task.Path != "" || string(s.Task.Inline) != "version: 1\nname: t\nprompt: hi\n" {
		t.Errorf("inline task = %q (path %q)", s.Task.Inline, s.Task.Path)
	}
}

func TestLoadSpecErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, spec string
		want       []string // substrings, one per expected error, in order
	}{
		{"unknown key with suggestion", "version: 1\nname: x\ntask: t.yaml\nrepos: [a]\nconcurency: 2\n",
			[]string{`b.yaml:5:1: unknown key "concurency" in the batch spec (did you mean "concurrency"?)`}},
		{"missing required", "repos: [a]\n",
			[]string{`b.yaml:1:1: the batch spec: missing required key "version"`, `missing required key "name"`, `missing required key "task"`}},
		{"no repos", "version: 1\nname: x\ntask: t.yaml\n",
			[]string{`b.yaml:1:1: the batch spec: missing required key "repos" or "repos_file"`}},
		{"wrong types", "version: one\nname: [x]\ntask: t.yaml\nrepos: {a: b}\nconcurrency: 0\n",
			[]string{`b.yaml:1:10: version: expected an integer, got a string`, `b.yaml:2:7: name: expected a string, got a list`,
				`b.yaml:4:8: repos: expected a list, got a mapping`, `b.yaml:5:14: concurrency: must be at least 1, got 0`}},
		{"bad version", "version: 2\nname: x\ntask: t.yaml\nrepos: [a]\n", []string{`b.yaml:1:10: version: unsupported version 2`}},
		{"task missing", "version: 1\nname: x\ntask: nope.yaml\nrepos: [a]\n",
			[]string{`b.yaml:3:7: task: task spec file "nope.yaml" not found (the path is relative to the batch file)`}},
		{"repo entries", "version: 1\nname: x\ntask: t.yaml\nrepos:\n  - {url: u, path: p}\n  - {ref: main}\n  - {path: p, id: 'bad id', inptus: {}}\n",
			[]string{`b.yaml:5:20: repos[0]: give either url or path, not both`, `b.yaml:6:5: repos[1]: missing required key "url" or "path"`,
				`b.yaml:7:29: unknown key "inptus" in repos[2] (did you mean "inputs"?)`, `b.yaml:7:19: repos[2].id: invalid id "bad id"`}},
		{"blank repositories", "version: 1\nname: x\ntask: t.yaml\nrepos: ['', {url: ' '}, {path: ''}]\n",
			[]string{`b.yaml:4:9: repos[0]: empty repository (give a URL or a path, or remove the entry)`,
				`b.yaml:4:19: repos[1].url: must not be empty`, `b.yaml:4:32: repos[2].path: must not be empty`}},
		{"limits", "version: 1\nname: x\ntask: t.yaml\nrepos: [a]\nlimits: {timeout: soon, max_cost_usd: -1, total: 3}\n",
			[]string{`b.yaml:5:19: limits.timeout: bad duration "soon"`, `b.yaml:5:39: limits.max_cost_usd: must be a finite number ≥ 0, got -1`,
				`b.yaml:5:43: unknown key "total" in limits (did you mean "total_max_cost_usd"?)`}},
		{"duplicate key", "version: 1\nname: x\nname: y\ntask: t.yaml\nrepos: [a]\n", []string{`b.yaml:3:1: duplicate key "name" in the batch spec`}},
		{"repos_file missing", "version: 1\nname: x\ntask: t.yaml\nrepos_file: none.txt\n", []string{`b.yaml:4:13: repos_file: cannot read "none.txt"`}},
		{"not yaml", "version: [1\n", []string{`b.yaml:2:1: YAML: did not find expected`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, filepath.Join(dir, "t.yaml"), "version: 1\n")
			write(t, filepath.Join(dir, "b.yaml"), tt.spec)
			_, err := LoadSpec(filepath.Join(dir, "b.yaml"))
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("err = %v, want ErrInvalidSpec", err)
			}
			var errs SpecErrors
			if !errors.As(err, &errs) || len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("missing %q in:\n%s", w, msg)
				}
			}
		})
	}
}

func TestLoadSpecGolden(t *testing.T) {
	t.Parallel()
	_, err := LoadSpec(filepath.Join("testdata", "invalid.yaml"))
	if err == nil {
		t.Fatal("no error")
	}
	golden.Check(t, filepath.Join("testdata", "invalid.golden"), []byte(err.Error()+"\n"))
}

func TestLooksLikeBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"version: 1\nrepos: []\n", true},
		{"repos_file: r.txt\n", true},
		{"version: 1\nname: t\nprompt: hi\n", false},
		{"- repos\n", false},
		{"{{{", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := LooksLikeBatch([]byte(tt.in)); got != tt.want {
			t.Errorf("LooksLikeBatch(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestRepoID(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, path, ref, want string }{
		{"https://github.com/org/repo.git", "", "", "github.com-org-repo"},
		{"https://github.com/org/repo", "", "v2", "github.com-org-repo-v2"},
		{"git@github.com:org/repo.git", "", "", "github.com-org-repo"},
		{"ssh://git@github.com/org/repo", "", "", "github.com-org-repo"},
		{"https://user@gitlab.example.com/g/sub/repo/", "", "", "gitlab.example.com-g-sub-repo"},
		{"file:///srv/git/app.git", "", "", "srv-git-app"},
		{"", "../repos/a", "", "repos-a"},
		{"", "./repos/a b", "feature/x", "repos-a-b-feature-x"},
		{"", "/", "", "repo"},
	}
	for _, tt := range tests {
		if got := RepoID(tt.url, tt.path, tt.ref); got != tt.want {
			t.Errorf("RepoID(%q, %q, %q) = %q, want %q", tt.url, tt.path, tt.ref, got, tt.want)
		}
	}
}

func TestBuildManifestIDs(t *testing.T) {
	t.Parallel()
	s := &Spec{Name: "x", Repos: []RepoSpec{
		{Path: "a"}, {Path: "./a"}, {URL: "file:///a"}, {Path: "b", ID: "a-2"},
	}}
	ids := manifestIDs(t, s)
	if diff := cmp.Diff([]string{"a", "a-3", "a-4", "a-2"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	s.Repos = append(s.Repos, RepoSpec{Path: "c", ID: "a-2", Pos: "b.yaml:9:5"})
	if _, err := BuildManifest(s); !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "b.yaml:9:5: duplicate repository id") {
		t.Errorf("duplicate explicit ids: err = %v", err)
	}
}

func FuzzLoadSpec(f *testing.F) {
	for _, seed := range []string{
		"version: 1\nname: x\ntask: t.yaml\nrepos: [a]\n",
		"version: 1\nname: x\ntask: {prompt: hi}\nrepos: [{url: u, ref: r, inputs: {a: 1}}]\nlimits: {timeout: 1m}\n",
		"repos: [[[", "- a\n", "version: 1\nrepos_file: r.txt\nclone: {depth: -1}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		dir := t.TempDir()
		path := filepath.Join(dir, "b.yaml")
		if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSpec(path)
		if err != nil {
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("error not ErrInvalidSpec: %v", err)
			}
			for _, se := range err.(SpecErrors) {
				if se.Line < 1 || se.Col < 1 {
					t.Fatalf("error without a position: %v", se)
				}
			}
			return
		}
		if _, err := BuildManifest(s); err != nil && !errors.Is(err, ErrInvalidSpec) {
			t.Fatalf("manifest: %v", err)
		}
	})
}

// manifestIDs builds the manifest of s and returns its ids in order.
func manifestIDs(t *testing.T, s *Spec) []string {
	t.Helper()
	m, err := BuildManifest(s)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(m.Repos))
	for _, r := range m.Repos {
		ids = append(ids, r.ID)
	}
	return ids
}
