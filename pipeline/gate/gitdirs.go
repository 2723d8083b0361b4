package gate

import (
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// moduleGitDirs are the .git-relative slash paths of the submodules'
// git directories below .git/modules (nested ones too): each has a
// config and hooks that git runs (the superproject's `git status` runs
// a submodule's core.fsmonitor). Symlinks are not followed.
// git is the git directory's path in root (".git", or "." for a root at
// the git directory).
func moduleGitDirs(root *safefs.Root, git string) []string {
	var out []string
	_ = root.Walk(path.Join(git, "modules"), func(e *safefs.Entry) error {
		if !e.IsDir() {
			return nil
		}
		switch e.Name {
		case "objects", "refs", "hooks", "logs", "info":
			return fs.SkipDir
		}
		if fi, err := root.Lstat(e.Rel + "/config"); err == nil && fi.Mode.IsRegular() {
			out = append(out, strings.TrimPrefix(e.Rel, git+"/"))
		}
		return nil
	})
	return out
}

// objectState is what the tripwire records of a .git/objects directory:
// each file's size, modification time and inode. Git never rewrites an
// object file, and it does not check a blob's hash when it checks the
// blob out, so a replaced loose object or pack changes what the user's
// next checkout writes; a new pack, index or commit-graph can shadow the
// objects of existing ones. New loose objects are harmless (`git add`).
type objectState map[string]objectStamp // objects-relative slash path

type objectStamp struct {
	size  int64
	mtime int64
	ino   uint64
}

// readObjects stamps every file below dir (a root-relative .git/objects
// directory), following no symlink (one is stamped as a file).
func readObjects(root *safefs.Root, dir string) objectState {
	st := objectState{}
	_ = root.Walk(dir, func(e *safefs.Entry) error {
		if e.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(e.Rel, dir+"/")
		if e.Rel == dir {
			rel = "."
		}
		st[rel] = objectStamp{size: e.Size, mtime: e.ModTime, ino: e.Ino}
		return nil
	})
	return st
}

// changes compares the objects directory dir (root-relative) with what
// was recorded: existing files changed or removed, and new files other
// than loose objects (packs, their indexes, commit-graph,
// multi-pack-index, info/). The new ones are removed (git would read
// them); replaced ones cannot be put back. It returns the work-tree-
// relative paths.
func (old objectState) changes(root *safefs.Root, dir string) []string {
	now := readObjects(root, dir)
	var changed []string
	for rel, was := range old {
		if cur, ok := now[rel]; !ok || cur != was {
			changed = append(changed, path.Join(dir, rel))
		}
	}
	for rel := range now {
		if _, ok := old[rel]; ok || isLooseObject(rel) {
			continue
		}
		changed = append(changed, path.Join(dir, rel))
		_ = root.Remove(path.Join(dir, rel))
	}
	slices.Sort(changed)
	return changed
}

// isLooseObject reports whether rel (objects-relative) names a loose
// object: two hex digits, a slash and the rest of the hex object id.
func isLooseObject(rel string) bool {
	dir, name, ok := strings.Cut(rel, "/")
	return ok && len(dir) == 2 && isHex(dir) && len(name) >= 38 && isHex(name) && !strings.Contains(name, "/")
}

func isHex(s string) bool {
	return strings.Trim(s, "0123456789abcdef") == ""
}
