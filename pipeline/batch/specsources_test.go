package batch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/pipeline"
)

// TestCheckSources: every kind of local repository the clone would fail
// on is a spec error at the entry's position (in the batch file or in
// repos_file), with a hint; good local repositories (a work tree, a bare
// clone, a ref that is a branch, a tag or a full hash) and remote URLs
// pass without being contacted.
func TestCheckSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Init(t, filepath.Join(dir, "good"), map[string]string{"a.txt": "a\n"})
	gittest.Run(t, filepath.Join(dir, "good"), "tag", "v1")
	head := gittest.Run(t, filepath.Join(dir, "good"), "rev-parse", "HEAD")
	gittest.Run(t, dir, "clone", "-q", "--bare", "good", "bare.git")
	gittest.Run(t, dir, "init", "-q", "-b", "main", "empty")
	write(t, filepath.Join(dir, "plain", "x.txt"), "not a repository\n")
	write(t, filepath.Join(dir, "file.txt"), "a file\n")
	write(t, filepath.Join(dir, "t.yaml"), "version: 1\nname: t\nprompt: p\n")
	write(t, filepath.Join(dir, "repos.txt"), "good v1\n# gone\nmissing-too main\n")
	write(t, filepath.Join(dir, "b.yaml"), `version: 1
name: b
task: t.yaml
repos:
  - path: good
  - {path: good, ref: `+head+`}
  - path: bare.git
    ref: main
  - https://github.com/o/never-contacted
  - path: missing
  - path: file.txt
  - path: plain
  - path: empty
  - {path: good, ref: nope}
  - path: good/sub
  - url: file://`+dir+`/nowhere
  - url: file://`+dir+`/good
repos_file: repos.txt
`)
	s, err := LoadSpec(filepath.Join(dir, "b.yaml"))
	if err != nil {
		t.Fatalf("LoadSpec checks structure only: %v", err)
	}
	err = CheckSources(s)
	if !errors.Is(err, ErrInvalidSpec) || pipeline.ExitCode(err) != 2 {
		t.Fatalf("err = %v (exit %d), want ErrInvalidSpec, exit 2", err, pipeline.ExitCode(err))
	}
	msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	want := []string{
		`b.yaml:10:5: path: local repository "missing" does not exist (looked for missing) (the path is relative to the batch file: fix it, or make a git repository there)`,
		`b.yaml:11:5: path: local repository "file.txt" is not a directory`,
		`b.yaml:12:5: path: local repository "plain" is not a git repository (plain) (run git init and commit there`,
		`b.yaml:13:5: path: local repository "empty" has no commit on HEAD`,
		`b.yaml:14:5: path: local repository "good" has no branch, tag or commit "nope" (good) (fix the ref`,
		`b.yaml:15:5: path: local repository "good/sub" does not exist`,
		`b.yaml:16:5: url: local repository "file://nowhere" does not exist`, // dir/ is cut from the URL too
		`repos.txt:3:1: path: local repository "missing-too" does not exist`,
	}
	var errs SpecErrors
	if !errors.As(err, &errs) || len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(errs), len(want), msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("missing %q in:\n%s", w, msg)
		}
	}
}

// TestRunMissingLocalRepo: batch run refuses a spec with a missing local
// repository before it starts (exit 2, the position named): no clone, no
// executor call, no results, where it used to clone, retry three times
// and record infra_failed.
func TestRunMissingLocalRepo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 1, "  - path: repos/gone\nretries: 2\n")
	ex := newFakeExec(func(string) behaviour { return edit })
	out := filepath.Join(dir, "out")
	_, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Executor: ex,
		RetryBackoff: time.Millisecond, CacheDir: filepath.Join(dir, "cache")})
	if !errors.Is(err, ErrInvalidSpec) || pipeline.ExitCode(err) != 2 {
		t.Fatalf("err = %v (exit %d), want ErrInvalidSpec, exit 2", err, pipeline.ExitCode(err))
	}
	if !strings.Contains(err.Error(), "batch.yaml:8:5: path: local repository \"repos/gone\" does not exist") {
		t.Errorf("err = %v, want the entry's position and what is missing", err)
	}
	if len(ex.calls) != 0 {
		t.Errorf("executor calls = %v, want none", ex.calls)
	}
	for _, p := range []string{out, filepath.Join(dir, "cache")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists (err %v): the batch started", p, err)
		}
	}
}
