package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// isolateGit points HOME and XDG_CONFIG_HOME at a temp dir and disables
// the system config, for both git and the Store.
func isolateGit(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(home))
	// No background gc or maintenance writing into .git after a command.
	t.Setenv("GIT_CONFIG_COUNT", "2")
	t.Setenv("GIT_CONFIG_KEY_0", "gc.auto")
	t.Setenv("GIT_CONFIG_VALUE_0", "0")
	t.Setenv("GIT_CONFIG_KEY_1", "maintenance.auto")
	t.Setenv("GIT_CONFIG_VALUE_1", "false")
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return home
}

// git runs the git CLI in dir with extra environment and returns stdout.
func git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "/usr/bin/git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return stdout.String()
}

func writeFile(t testing.TB, root, rel, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(p)
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

// gitFileSet is what `git add -A` would record: the index plus untracked
// files that are not ignored, minus tracked files deleted from disk.
// Untracked nested repositories show as their directory.
func gitFileSet(t testing.TB, dir string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, p := range splitZ(git(t, dir, nil, "ls-files", "-z")) {
		set[p] = true
	}
	for _, p := range splitZ(git(t, dir, nil, "ls-files", "-z", "-o", "--exclude-standard")) {
		set[strings.TrimSuffix(p, "/")] = true
	}
	for _, p := range splitZ(git(t, dir, nil, "ls-files", "-z", "-d")) {
		delete(set, p)
	}
	return sortedKeys(set)
}

func splitZ(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\x00") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// treeFiles lists the non-directory paths of a snapshot with their modes.
func treeFiles(t testing.TB, s *Store, tree Tree) map[string]uint32 {
	t.Helper()
	h, err := parseTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint32{}
	var walk func(h plumbing.Hash, dir string)
	walk = func(h plumbing.Hash, dir string) {
		es, err := s.readTree(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.mode == modeDir {
				walk(e.hash, joinRel(dir, e.name))
			} else {
				out[joinRel(dir, e.name)] = e.mode
			}
		}
	}
	walk(h, "")
	return out
}

func keysOf(m map[string]uint32) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkout materialises a snapshot into a new directory with git itself.
func checkout(t testing.TB, s *Store, tree Tree) string {
	t.Helper()
	dst := t.TempDir()
	env := []string{"GIT_DIR=" + s.storeDir, "GIT_WORK_TREE=" + dst, "GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	git(t, dst, env, "read-tree", string(tree))
	git(t, dst, env, "checkout-index", "-a")
	return dst
}

// dirDigest describes every path under root (skipping .git at the top
// and the given nested repository directories) as type, exec bit and
// content hash.
func dirDigest(t testing.TB, root string, only map[string]uint32) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			if m, ok := only[rel]; ok && m == modeGitlink {
				out[rel] = "gitlink"
				return filepath.SkipDir
			}
			return nil
		}
		if only != nil {
			if _, ok := only[rel]; !ok {
				return nil
			}
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = "file:" + hex.EncodeToString(sum[:]) + ":" + map[bool]string{true: "x", false: "-"}[fi.Mode().Perm()&0o100 != 0]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hashTree hashes every file under dir (names, modes and contents).
func hashTree(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		h.Write([]byte(p + "\x00" + fi.Mode().String() + "\x00" + fi.ModTime().String() + "\x00"))
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func openStore(t testing.TB, wt string, exclude ...string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: filepath.Join(t.TempDir(), "store"), Exclude: exclude})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
