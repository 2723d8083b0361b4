package gate

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// moduleGitDirs are the gitDir-relative slash paths of the submodules'
// git directories below .git/modules (nested ones too): each has a
// config and hooks that git runs (the superproject's `git status` runs
// a submodule's core.fsmonitor).
func moduleGitDirs(gitDir string) []string {
	var out []string
	root := filepath.Join(gitDir, "modules")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil //nolint:nilerr // nothing to watch there
		}
		switch d.Name() {
		case "objects", "refs", "hooks", "logs", "info":
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "config")); err == nil {
			rel, _ := filepath.Rel(gitDir, p)
			out = append(out, filepath.ToSlash(rel))
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

// readObjects stamps every file below dir (a .git/objects directory).
func readObjects(dir string) objectState {
	st := objectState{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil //nolint:nilerr // an unreadable directory records nothing
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil //nolint:nilerr // gone meanwhile
		}
		var ino uint64
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = sys.Ino
		}
		rel, _ := filepath.Rel(dir, p)
		st[filepath.ToSlash(rel)] = objectStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: ino}
		return nil
	})
	return st
}

// objectChanges compares the objects directory dir with what was
// recorded: existing files changed or removed, and new files other than
// loose objects (packs, their indexes, commit-graph, multi-pack-index,
// info/). The new ones are removed (git would read them); replaced ones
// cannot be put back. It returns the .git-relative paths (prefix, e.g.
// ".git/objects/").
func (old objectState) changes(dir, prefix string) []string {
	now := readObjects(dir)
	var changed []string
	for rel, was := range old {
		if cur, ok := now[rel]; !ok || cur != was {
			changed = append(changed, prefix+rel)
		}
	}
	for rel := range now {
		if _, ok := old[rel]; ok || isLooseObject(rel) {
			continue
		}
		changed = append(changed, prefix+rel)
		_ = os.Remove(filepath.Join(dir, filepath.FromSlash(rel)))
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
