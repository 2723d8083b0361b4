package gate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// git runs git in dir with a fixed identity and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitlinkRepo is a committed repository holding a nested repository at
// vendor/x (not in its index) and the nested one's HEAD commit.
func gitlinkRepo(t *testing.T) (wt, head string) {
	t.Helper()
	wt = t.TempDir()
	mustWrite(t, filepath.Join(wt, "a.txt"), "a\n")
	git(t, wt, "init", "-q")
	git(t, wt, "add", "a.txt")
	git(t, wt, "commit", "-qm", "a")
	nested := filepath.Join(wt, "vendor", "x")
	mustWrite(t, filepath.Join(nested, "x.txt"), "x\n")
	git(t, nested, "init", "-q")
	git(t, nested, "add", "x.txt")
	git(t, nested, "commit", "-qm", "x")
	return wt, strings.TrimSpace(git(t, nested, "rev-parse", "HEAD"))
}

// TestTripwireGitlinkAdded: a command that adds a nested repository to the
// index as a gitlink fails the gate, which names the gitlink and puts
// the index back byte for byte; staging a plain file does not.
func TestTripwireGitlinkAdded(t *testing.T) {
	wt, head := gitlinkRepo(t)
	index := filepath.Join(wt, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	g := GitTripwire{Tripwire: ArmTripwire(wt)}
	git(t, wt, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/x")
	if !strings.Contains(git(t, wt, "ls-files", "-s"), "160000") {
		t.Fatal("control: the gitlink was not added")
	}
	f, ok := g.Check()
	if !ok || f.Gate != event.GateGitTripwire || strings.Join(f.Paths, ",") != ".git/index" ||
		!strings.Contains(f.Message, "nested repositories vendor/x as submodules") {
		t.Fatalf("gate %+v, %v: want git_tripwire naming .git/index and vendor/x", f, ok)
	}
	if after, _ := os.ReadFile(index); !bytes.Equal(after, before) {
		t.Error("the index was not put back as the run found it")
	}
	if s := git(t, wt, "ls-files", "-s"); strings.Contains(s, "160000") {
		t.Errorf("the gitlink is still in the index:\n%s", s)
	}

	mustWrite(t, filepath.Join(wt, "b.txt"), "b\n")
	git(t, wt, "add", "b.txt")
	if f, ok := g.Check(); ok {
		t.Errorf("staging a plain file failed the gate: %+v", f)
	}
}

// TestTripwireGitlinkNoIndex: with no index when armed, an index a command
// creates holding a gitlink is removed.
func TestTripwireGitlinkNoIndex(t *testing.T) {
	wt, head := gitlinkRepo(t)
	index := filepath.Join(wt, ".git", "index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	g := GitTripwire{Tripwire: ArmTripwire(wt)}
	git(t, wt, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/x")
	f, ok := g.Check()
	if !ok || !strings.Contains(f.Message, "vendor/x") {
		t.Fatalf("gate %+v, %v: want the new gitlink vendor/x named", f, ok)
	}
	if _, err := os.Stat(index); !os.IsNotExist(err) {
		t.Errorf("the index a command created is still there: %v", err)
	}
}

// TestTripwireIndexUnreadable: an index rewritten into something git
// cannot read is named as such and put back.
func TestTripwireIndexUnreadable(t *testing.T) {
	wt, _ := gitlinkRepo(t)
	index := filepath.Join(wt, ".git", "index")
	before, _ := os.ReadFile(index)
	g := GitTripwire{Tripwire: ArmTripwire(wt)}
	mustWrite(t, index, "not an index")
	f, ok := g.Check()
	if !ok || !strings.Contains(f.Message, "(an index git cannot read)") {
		t.Fatalf("gate %+v, %v: want the unreadable index named", f, ok)
	}
	if after, _ := os.ReadFile(index); !bytes.Equal(after, before) {
		t.Error("the index was not put back")
	}
}

// TestTripwireSubmoduleGits: a submodule's gitfile pointed elsewhere, and
// an embedded git directory's config and a new hook, fail the gate and
// are put back (the hook removed).
func TestTripwireSubmoduleGits(t *testing.T) {
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n")
	mustWrite(t, filepath.Join(wt, ".gitmodules"),
		"[submodule \"a\"]\n\tpath = a\n[submodule \"b\"]\n\tpath = b\n[submodule \"c\"]\n\tpath = c\n")
	mustWrite(t, filepath.Join(wt, "a", ".git"), "gitdir: ../.git/modules/a\n")
	mustWrite(t, filepath.Join(wt, "b", ".git", "config"), "[core]\n")
	mustWrite(t, filepath.Join(wt, "c", "c.txt"), "c\n")
	g := GitTripwire{Tripwire: ArmTripwire(wt)}
	if f, ok := g.Check(); ok {
		t.Fatalf("untouched submodules failed the gate: %+v", f)
	}
	mustWrite(t, filepath.Join(wt, "a", ".git"), "gitdir: /tmp/evil\n")
	mustWrite(t, filepath.Join(wt, "b", ".git", "config"), "[core]\n\tfsmonitor = ./evil\n")
	mustWrite(t, filepath.Join(wt, "b", ".git", "hooks", "post-checkout"), "#!/bin/sh\nevil\n")
	if err := os.Symlink("/tmp/evil", filepath.Join(wt, "c", ".git")); err != nil {
		t.Fatal(err)
	}
	f, ok := g.Check()
	want := "a/.git,b/.git/config,b/.git/hooks/post-checkout,c/.git"
	if !ok || strings.Join(f.Paths, ",") != want {
		t.Fatalf("gate %+v, %v: want paths %s", f, ok, want)
	}
	if data, _ := os.ReadFile(filepath.Join(wt, "a", ".git")); string(data) != "gitdir: ../.git/modules/a\n" {
		t.Errorf("a/.git not put back: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(wt, "b", ".git", "config")); string(data) != "[core]\n" {
		t.Errorf("b/.git/config not put back: %q", data)
	}
	for _, p := range []string{"b/.git/hooks/post-checkout", "c/.git"} {
		if _, err := os.Lstat(filepath.Join(wt, p)); !os.IsNotExist(err) {
			t.Errorf("%s a command added is still there: %v", p, err)
		}
	}
}

// TestTripwireModuleGitDir: a config changed in a submodule's git
// directory below .git/modules fails the gate and is put back.
func TestTripwireModuleGitDir(t *testing.T) {
	wt := t.TempDir()
	cfg := filepath.Join(wt, ".git", "modules", "lib", "config")
	mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n")
	mustWrite(t, cfg, "[core]\n")
	mustWrite(t, filepath.Join(wt, ".git", "modules", "lib", "objects", "info", "packs"), "")
	g := GitTripwire{Tripwire: ArmTripwire(wt)}
	mustWrite(t, cfg, "[core]\n\tfsmonitor = ./evil\n")
	f, ok := g.Check()
	if !ok || strings.Join(f.Paths, ",") != ".git/modules/lib/config" {
		t.Fatalf("gate %+v, %v: want .git/modules/lib/config", f, ok)
	}
	if data, _ := os.ReadFile(cfg); string(data) != "[core]\n" {
		t.Errorf("the module's config was not put back: %q", data)
	}
}
