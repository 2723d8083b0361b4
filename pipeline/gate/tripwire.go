package gate

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// Tripwire is what the git tripwire and the submodule gate saw when the
// run started: the bytes of .git's files that make git run programs or
// change how it reads files, and a digest of each submodule's files.
type Tripwire struct {
	gitDir     string
	files      map[string][]byte      // gitDir-relative slash path → content
	objects    map[string]objectState // object directories (gitDir-relative: "objects", "modules/x/objects") → stamps
	submodules map[string]string      // work-tree-relative path → digest of its files
}

// tripwireFiles are the watched files of a .git directory: what makes git
// run programs (config, hooks), change how it reads files (attributes,
// exclude), where it finds objects (alternates) and what the branches are
// (HEAD, refs, packed-refs: a moved branch is pushed by the user's next
// git push). tripwireDirs are watched whole.
func tripwireFiles() []string {
	return []string{"config", "config.worktree", "info/attributes", "info/exclude", "objects/info/alternates",
		"HEAD", "packed-refs", "commondir"}
}

func tripwireDirs() []string { return []string{"hooks", "refs"} }

// ArmTripwire records the watched files of workTree's .git and the
// digests of its submodules (right after the base snapshot).
func ArmTripwire(workTree string) *Tripwire {
	t := &Tripwire{gitDir: filepath.Join(workTree, ".git"), files: map[string][]byte{}, submodules: map[string]string{}}
	if fi, err := os.Stat(t.gitDir); err != nil || !fi.IsDir() {
		t.gitDir = "" // no repository, or a linked worktree's gitfile: its config is outside the tree, read-only in the sandbox
	}
	if t.gitDir != "" {
		for rel, data := range t.read() {
			t.files[rel] = data
		}
		t.objects = map[string]objectState{}
		for _, d := range append([]string{""}, moduleGitDirs(t.gitDir)...) {
			rel := path.Join(d, "objects")
			t.objects[rel] = readObjects(filepath.Join(t.gitDir, filepath.FromSlash(rel)))
		}
	}
	for _, sub := range submodulePaths(workTree) {
		t.submodules[sub] = treeDigest(filepath.Join(workTree, filepath.FromSlash(sub)))
	}
	return t
}

// read returns the watched files as they are now: the git directory's
// and each submodule's below .git/modules.
func (t *Tripwire) read() map[string][]byte {
	out := map[string][]byte{}
	for _, d := range append([]string{""}, moduleGitDirs(t.gitDir)...) {
		t.readGitDir(d, out)
	}
	return out
}

// readGitDir adds the watched files of the git directory at the
// gitDir-relative slash path sub ("" for the top one) to out.
func (t *Tripwire) readGitDir(sub string, out map[string][]byte) {
	for _, rel := range tripwireFiles() {
		rel = path.Join(sub, rel)
		if data, err := os.ReadFile(filepath.Join(t.gitDir, filepath.FromSlash(rel))); err == nil {
			out[rel] = data
		}
	}
	for _, dir := range tripwireDirs() {
		_ = filepath.WalkDir(filepath.Join(t.gitDir, filepath.FromSlash(path.Join(sub, dir))), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil //nolint:nilerr // a missing hooks dir has no hooks
			}
			if data, err := os.ReadFile(p); err == nil {
				rel, _ := filepath.Rel(t.gitDir, p)
				out[filepath.ToSlash(rel)] = data
			}
			return nil
		})
	}
}

// restore compares the watched files with what was recorded, puts back
// every changed or removed one, deletes added ones, and returns the
// changed paths (".git/…").
func (t *Tripwire) restore() []string {
	if t == nil || t.gitDir == "" {
		return nil
	}
	now := t.read()
	var changed []string
	for rel, old := range t.files {
		if cur, ok := now[rel]; !ok || !bytes.Equal(cur, old) {
			changed = append(changed, ".git/"+rel)
			_ = os.WriteFile(filepath.Join(t.gitDir, filepath.FromSlash(rel)), old, 0o644)
		}
	}
	for rel := range now {
		if _, ok := t.files[rel]; !ok {
			changed = append(changed, ".git/"+rel)
			_ = os.Remove(filepath.Join(t.gitDir, filepath.FromSlash(rel)))
		}
	}
	for rel, old := range t.objects {
		changed = append(changed, old.changes(filepath.Join(t.gitDir, filepath.FromSlash(rel)), ".git/"+rel+"/")...)
	}
	slices.Sort(changed)
	return changed
}
