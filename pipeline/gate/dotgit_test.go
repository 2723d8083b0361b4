package gate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTripwireDotGit: the work tree's .git, when it was a gitfile or
// missing, is put back whatever a command put there (a directory, a
// symlink out of the tree, other bytes); the outside target is never
// written or removed, and the gate names .git.
func TestTripwireDotGit(t *testing.T) {
	const gitfile = "gitdir: /repos/main/.git/worktrees/wt\n"
	for _, c := range []struct {
		name   string
		before string // the gitfile's bytes; "": no .git
		plant  func(t *testing.T, wt, outside string)
	}{
		{"gitfile-rewritten", gitfile, func(t *testing.T, wt, _ string) {
			t.Helper()
			mustWrite(t, filepath.Join(wt, ".git"), "gitdir: build/evil/.git\n")
		}},
		{"gitfile-to-dir", gitfile, func(t *testing.T, wt, _ string) {
			t.Helper()
			must(t, os.Remove(filepath.Join(wt, ".git")))
			mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n\tfsmonitor = ./evil\n")
		}},
		{"gitfile-to-link", gitfile, func(t *testing.T, wt, outside string) {
			t.Helper()
			must(t, os.Remove(filepath.Join(wt, ".git")))
			must(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(wt, ".git")))
		}},
		{"none-to-dir", "", func(t *testing.T, wt, _ string) {
			t.Helper()
			mustWrite(t, filepath.Join(wt, ".git", "HEAD"), "ref: refs/heads/main\n")
			mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n\tfsmonitor = ./evil\n")
		}},
		{"none-to-link", "", func(t *testing.T, wt, outside string) {
			t.Helper()
			must(t, os.Symlink(outside, filepath.Join(wt, ".git")))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wt, outside := t.TempDir(), t.TempDir()
			mustWrite(t, filepath.Join(outside, "victim"), "outside\n")
			mustWrite(t, filepath.Join(outside, "HEAD"), "ref: refs/heads/main\n")
			if c.before != "" {
				mustWrite(t, filepath.Join(wt, ".git"), c.before)
			}
			tw := ArmTripwire(wt)
			c.plant(t, wt, outside)
			res, failed := GitTripwire{Tripwire: tw}.Check()
			if !failed || !slices.Contains(res.Paths, ".git") {
				t.Errorf("gate %+v (failed %v), want it to name .git", res, failed)
			}
			got, err := os.ReadFile(filepath.Join(wt, ".git"))
			switch {
			case c.before == "" && !os.IsNotExist(err):
				t.Errorf(".git after the gate: %q, %v; want none", got, err)
			case c.before != "" && string(got) != c.before:
				t.Errorf(".git after the gate: %q, %v; want %q", got, err, c.before)
			}
			for name, want := range map[string]string{"victim": "outside\n", "HEAD": "ref: refs/heads/main\n"} {
				if b, err := os.ReadFile(filepath.Join(outside, name)); err != nil || string(b) != want {
					t.Errorf("outside %s is %q, %v; want %q", name, b, err, want)
				}
			}
			if _, again := (GitTripwire{Tripwire: tw}).Check(); again {
				t.Errorf("the gate fails again after its repair")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTripwireDotGitSubmodule: in a linked worktree (.git a gitfile) a
// submodule's gitfile a command redirected is put back too.
func TestTripwireDotGitSubmodule(t *testing.T) {
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, ".git"), "gitdir: /repos/main/.git/worktrees/wt\n")
	mustWrite(t, filepath.Join(wt, ".gitmodules"), "[submodule \"a\"]\n\tpath = a\n")
	mustWrite(t, filepath.Join(wt, "a", ".git"), "gitdir: /repos/main/.git/worktrees/wt/modules/a\n")
	g := GitTripwire{Tripwire: ArmTripwire(wt)}
	mustWrite(t, filepath.Join(wt, "a", ".git"), "gitdir: ../evil/.git\n")
	if f, ok := g.Check(); !ok || !slices.Contains(f.Paths, "a/.git") {
		t.Errorf("gate %+v (failed %v), want it to name a/.git", f, ok)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "a", ".git")); string(b) != "gitdir: /repos/main/.git/worktrees/wt/modules/a\n" {
		t.Errorf("a/.git not put back: %q", b)
	}
}
