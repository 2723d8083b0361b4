package github

import (
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
)

var testSig = object.Signature{Name: "T", Email: "t@example.com", When: time.Unix(1700000000, 0)}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// seed makes a bare "remote" and a work repository whose base commit is on
// the remote's main branch. It returns the work dir, the remote dir and the
// base commit.
func seed(t *testing.T) (string, string, string) {
	t.Helper()
	remoteDir, work := filepath.Join(t.TempDir(), "remote.git"), t.TempDir()
	if _, err := git.PlainInit(remoteDir, true); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainInit(work, false)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "keep/x.txt": "x\n", "old/gone.txt": "g\n", ".gitignore": "ignored\n"})
	wt, _ := repo.Worktree()
	if err := wt.AddGlob("."); err != nil {
		t.Fatal(err)
	}
	base, err := wt.Commit("base", &git.CommitOptions{Author: &testSig})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{remoteDir}}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(&git.PushOptions{RefSpecs: []config.RefSpec{"refs/heads/master:refs/heads/main"}}); err != nil {
		t.Fatal(err)
	}
	return work, remoteDir, base.String()
}

type fileState struct {
	Content string
	Mode    filemode.FileMode
}

// branchTree lists the files of a branch in a repository and its commit.
func branchTree(t *testing.T, repoDir, branch string) (map[string]fileState, *object.Commit) {
	t.Helper()
	repo, err := git.PlainOpen(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	tree, _ := c.Tree()
	got := map[string]fileState{}
	err = tree.Files().ForEach(func(f *object.File) error {
		s, err := f.Contents()
		got[f.Name] = fileState{s, f.Mode}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, c
}

func TestPushBranchHoldsExactlyThePatchedTree(t *testing.T) {
	t.Parallel()
	work, remote, base := seed(t)
	// The agent's work: modify, delete, add an executable, delete a whole
	// directory; plus an ignored and an unlisted file that must not be pushed.
	writeFiles(t, work, map[string]string{"a.txt": "A2\n", "dir/c.sh": "#!/bin/sh\n", "ignored": "junk\n", "stray.txt": "not in patch\n"})
	if err := os.Remove(filepath.Join(work, "b.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(work, "old")); err != nil {
		t.Fatal(err)
	}
	opts := PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: []string{"a.txt", "b.txt", "dir/c.sh", "old/gone.txt"},
		Branch: "runner/fix-1", RemoteURL: remote, Token: "ignored-for-file-remotes", AuthorName: "runner", AuthorEmail: "r@example.com",
		Message: "Fix things", Time: testSig.When}
	sha, err := PushBranch(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got, c := branchTree(t, remote, "runner/fix-1")
	want := map[string]fileState{
		".gitignore": {"ignored\n", filemode.Regular}, "a.txt": {"A2\n", filemode.Regular},
		"keep/x.txt": {"x\n", filemode.Regular}, "dir/c.sh": {"#!/bin/sh\n", filemode.Executable},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("branch tree (-want +got):\n%s", d)
	}
	if c.Hash.String() != sha || len(c.ParentHashes) != 1 || c.ParentHashes[0].String() != base || c.Message != "Fix things" || c.Author.Name != "runner" {
		t.Errorf("commit %s parents %v message %q author %v", c.Hash, c.ParentHashes, c.Message, c.Author)
	}
	// The local repository got objects but no refs.
	out, err := exec.CommandContext(t.Context(), "git", "-C", work, "for-each-ref", "--format=%(refname)").Output()
	if err != nil || strings.TrimSpace(string(out)) != "refs/heads/master\nrefs/remotes/origin/main" {
		t.Errorf("local refs changed: %q %v", out, err)
	}

	// A second run replaces the branch (forced, on the same base).
	writeFiles(t, work, map[string]string{"a.txt": "A3\n"})
	opts.Paths = []string{"a.txt"}
	sha2, err := PushBranch(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got, c = branchTree(t, remote, "runner/fix-1")
	if got["a.txt"].Content != "A3\n" || got["b.txt"].Content != "b\n" || c.Hash.String() != sha2 || c.ParentHashes[0].String() != base {
		t.Errorf("second push: %v parent %v", got, c.ParentHashes)
	}
	if err := exec.CommandContext(t.Context(), "git", "-C", remote, "fsck", "--strict").Run(); err != nil {
		t.Errorf("git fsck of the remote: %v", err)
	}
}

func TestPushLease(t *testing.T) {
	t.Parallel()
	work, remote, base := seed(t)
	writeFiles(t, work, map[string]string{"a.txt": "mine\n"})
	opts := PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: []string{"a.txt"}, Branch: "b", RemoteURL: remote, Message: "m"}
	first, err := PushBranch(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := git.PlainOpen(work)
	opts.Message = "another attempt" // a different commit than the one pushed
	commit, err := commitPatch(repo, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := git.NewRemote(repo.Storer, &config.RemoteConfig{Name: pushRemoteName, URLs: []string{remote}})
	// Someone moved the branch after we read it: our lease is stale.
	stale := plumbing.NewHash(base)
	if err := pushCommit(t.Context(), r, nil, commit, "b", stale); !errors.Is(err, ErrLease) {
		t.Errorf("stale lease: err = %v, want ErrLease", err)
	}
	// We read "absent" but it was created meanwhile.
	if err := pushCommit(t.Context(), r, nil, commit, "b", plumbing.ZeroHash); !errors.Is(err, ErrLease) {
		t.Errorf("absent lease: err = %v, want ErrLease", err)
	}
	if _, c := branchTree(t, remote, "b"); c.Hash.String() != first {
		t.Errorf("branch moved to %s despite the lease", c.Hash)
	}
	if err := pushCommit(t.Context(), r, nil, commit, "b", plumbing.NewHash(first)); err != nil {
		t.Errorf("current lease: %v", err)
	}
}

// TestPushOverHTTPWithToken pushes through git http-backend and checks the
// token arrives as basic auth x-access-token:TOKEN.
func TestPushOverHTTPWithToken(t *testing.T) {
	t.Parallel()
	backend, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	work, remote, base := seed(t)
	if err := exec.CommandContext(t.Context(), "git", "-C", remote, "config", "http.receivepack", "true").Run(); err != nil {
		t.Fatal(err)
	}
	cgiHandler := &cgi.Handler{Path: backend, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(remote), "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "x-access-token" || p != "tok" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "auth", http.StatusUnauthorized)
			return
		}
		cgiHandler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	writeFiles(t, work, map[string]string{"a.txt": "over http\n"})
	opts := PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: []string{"a.txt"}, Branch: "h",
		RemoteURL: srv.URL + "/" + filepath.Base(remote), Token: "tok", Message: "m"}
	if _, err := PushBranch(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if got, _ := branchTree(t, remote, "h"); got["a.txt"].Content != "over http\n" {
		t.Errorf("a.txt = %q", got["a.txt"].Content)
	}
	opts.Token = "wrong"
	if _, err := PushBranch(t.Context(), opts); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("bad token: err = %v", err)
	}
}

func TestPushBranchErrors(t *testing.T) {
	t.Parallel()
	work, remote, base := seed(t)
	tests := []struct {
		name string
		edit func(*PushOptions)
		want error
	}{
		{"bad branch", func(o *PushOptions) { o.Branch = "a..b" }, ErrBranchName},
		{"no tree", func(o *PushOptions) { o.WorkTree = "" }, ErrPush},
		{"escaping path", func(o *PushOptions) { o.Paths = []string{"../x"} }, ErrPush},
		{"git dir path", func(o *PushOptions) { o.Paths = []string{".git/config"} }, ErrPush},
		{"unknown base", func(o *PushOptions) { o.BaseCommit = strings.Repeat("1", 40) }, ErrPush},
		{"nothing changed", func(o *PushOptions) { o.Paths = []string{"a.txt", "not-there.txt"} }, ErrNoChanges},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: []string{"a.txt"}, Branch: "x", RemoteURL: remote}
			tt.edit(&o)
			if _, err := PushBranch(t.Context(), o); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestPushFromShallowClone pushes from a depth-1 clone, what
// actions/checkout leaves by default, after the remote's main moved on.
func TestPushFromShallowClone(t *testing.T) {
	t.Parallel()
	seedWork, remote, _ := seed(t)
	// Two more commits on main, so the clone's base has missing parents.
	for i, content := range []string{"a2\n", "a3\n"} {
		writeFiles(t, seedWork, map[string]string{"a.txt": content})
		gitRun(t, seedWork, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qam", sprintf("c%d", i))
		gitRun(t, seedWork, "push", "-q", remote, "HEAD:refs/heads/main")
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gitRun(t, "", "clone", "-q", "--depth", "1", "--branch", "main", "file://"+remote, clone)
	base := strings.TrimSpace(gitRun(t, clone, "rev-parse", "HEAD"))
	// main moves again after the checkout.
	writeFiles(t, seedWork, map[string]string{"b.txt": "moved\n"})
	gitRun(t, seedWork, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qam", "later")
	gitRun(t, seedWork, "push", "-q", remote, "HEAD:refs/heads/main")

	writeFiles(t, clone, map[string]string{"new.txt": "from a shallow clone\n"})
	_, err := PushBranch(t.Context(), PushOptions{RepoDir: clone, BaseCommit: base, WorkTree: clone, Paths: []string{"new.txt"},
		Branch: "runner/shallow", RemoteURL: remote, Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	got, c := branchTree(t, remote, "runner/shallow")
	if got["new.txt"].Content != "from a shallow clone\n" || got["a.txt"].Content != "a3\n" || c.ParentHashes[0].String() != base {
		t.Errorf("tree %v parent %v", got, c.ParentHashes)
	}
	if out, err := exec.CommandContext(t.Context(), "git", "-C", remote, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.CommandContext(t.Context(), "git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestPushTypeChanges: a directory that became a file and a file that
// became a directory are pushed whatever order the patch lists the paths in.
func TestPushTypeChanges(t *testing.T) {
	t.Parallel()
	asFile := map[string]string{".gitignore": "ignored\n", "a.txt": "a\n", "b.txt": "b\n", "keep": "now a file\n", "old/gone.txt": "g\n"}
	asDir := map[string]string{".gitignore": "ignored\n", "a.txt/y": "y\n", "b.txt": "b\n", "keep/x.txt": "x\n", "old/gone.txt": "g\n"}
	tests := []struct {
		name   string
		change func(t *testing.T, work string)
		paths  []string
		want   map[string]string // path → content of the pushed tree
	}{
		{"dir to file", dirToFile, []string{"keep", "keep/x.txt"}, asFile},
		{"dir to file, reversed", dirToFile, []string{"keep/x.txt", "keep"}, asFile},
		{"file to dir", fileToDir, []string{"a.txt", "a.txt/y"}, asDir},
		{"file to dir, reversed", fileToDir, []string{"a.txt/y", "a.txt"}, asDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			work, remote, base := seed(t)
			tt.change(t, work)
			_, err := PushBranch(t.Context(), PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: tt.paths,
				Branch: "b", RemoteURL: remote, Message: "m", Time: testSig.When})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := branchTree(t, remote, "b")
			contents := map[string]string{}
			for p, f := range got {
				contents[p] = f.Content
			}
			if d := cmp.Diff(tt.want, contents); d != "" {
				t.Errorf("branch tree (-want +got):\n%s", d)
			}
		})
	}
}

func dirToFile(t *testing.T, work string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(work, "keep")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{"keep": "now a file\n"})
}

func fileToDir(t *testing.T, work string) {
	t.Helper()
	if err := os.Remove(filepath.Join(work, "a.txt")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{"a.txt/y": "y\n"})
}

// TestPushExpect: with Expect (a pull request's head as checked out), the
// new commit goes on top of it, and a branch someone moved since is not
// overwritten (ErrLease), though PushBranch read it just before.
func TestPushExpect(t *testing.T) {
	t.Parallel()
	work, remote, base := seed(t)
	writeFiles(t, work, map[string]string{"a.txt": "first\n"})
	opts := PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: []string{"a.txt"}, Branch: "pr", RemoteURL: remote, Message: "m1"}
	head, err := PushBranch(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, work, map[string]string{"a.txt": "second\n"})
	follow := PushOptions{RepoDir: work, BaseCommit: head, WorkTree: work, Paths: []string{"a.txt"}, Branch: "pr", RemoteURL: remote,
		Message: "m2", Expect: head}
	next, err := PushBranch(t.Context(), follow)
	if err != nil {
		t.Fatal(err)
	}
	if _, c := branchTree(t, remote, "pr"); c.Hash.String() != next || c.ParentHashes[0].String() != head {
		t.Errorf("branch at %s (parent %v), want %s on top of %s", c.Hash, c.ParentHashes, next, head)
	}
	// The branch is at next now; a push that expects head must not drop it.
	writeFiles(t, work, map[string]string{"a.txt": "third\n"})
	follow.Message = "m3"
	if _, err := PushBranch(t.Context(), follow); !errors.Is(err, ErrLease) {
		t.Errorf("push expecting a stale head: %v, want ErrLease", err)
	}
	if _, c := branchTree(t, remote, "pr"); c.Hash.String() != next {
		t.Errorf("branch moved to %s despite Expect", c.Hash)
	}
}
