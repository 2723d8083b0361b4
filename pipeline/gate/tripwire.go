package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// Tripwire is what the git tripwire and the submodule gate saw when the
// run started: the bytes of .git's files that make git run programs or
// change how it reads files, and a digest of each submodule's files.
// Every read and repair goes through internal/safefs: a symlink a command
// planted in .git, or in .git's place, is replaced, never followed.
type Tripwire struct {
	root       *safefs.Root           // the work tree
	gitDir     bool                   // the work tree has a .git directory
	gfs        *safefs.Root           // where the git directory is opened: root, or a symlinked .git's target
	git        string                 // the git directory in gfs: ".git", or "." (a symlinked .git)
	files      map[string][]byte      // git-dir-relative slash path → content
	objects    map[string]objectState // object directories (git-dir-relative: "objects", "modules/x/objects") → stamps
	submodules map[string]string      // work-tree-relative path → digest of its files
	index      armedIndex             // the index, for the gitlinks a command adds
	gitlinks   []string               // gitlinks a command added (restore)
	subGits    map[string]watched     // the submodules' .git entries (gitfiles, embedded configs and hooks)
	top        dotGit                 // the work tree's .git when it is a gitfile or missing
	lost       []string               // paths the restore could not put back, with why
}

// tripwireMaxFile bounds a watched file's size (16 MiB): a bigger one is
// not read (a sparse 1 TiB config) and counts as changed.
const tripwireMaxFile = 16 << 20

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
// digests of its submodules (right after the base snapshot, before any
// command: a .git that is a link then is the user's, followed as it
// resolves now).
func ArmTripwire(workTree string) *Tripwire {
	t := &Tripwire{root: safefs.New(resolved(workTree)), files: map[string][]byte{}, submodules: map[string]string{}}
	// No repository, or a linked worktree's gitfile: its config is outside
	// the tree, read-only in the sandbox, but the entry itself is not.
	t.armDotGit()
	fi, err := t.root.Lstat(".git")
	switch {
	case err == nil && fi.IsDir():
		t.gitDir, t.gfs, t.git = true, t.root, ".git"
	case err == nil && fi.Mode&fs.ModeSymlink != 0:
		// The user's own link (before any command ran): its target, as
		// resolved now, is where the repairs write.
		if real, err := filepath.EvalSymlinks(filepath.Join(t.root.Dir(), ".git")); err == nil {
			if st, err := safefs.New(real).Lstat("."); err == nil && st.IsDir() {
				t.gitDir, t.gfs, t.git = true, safefs.New(real), "."
			}
		}
	}
	if t.gitDir {
		for rel, w := range t.read() {
			if w.ok {
				t.files[rel] = w.data
			}
		}
		t.armIndex()
		t.objects = map[string]objectState{}
		for _, d := range append([]string{""}, moduleGitDirs(t.gfs, t.git)...) {
			rel := path.Join(d, "objects")
			t.objects[rel] = readObjects(t.gfs, path.Join(t.git, rel))
		}
	}
	for _, sub := range submodulePaths(t.root) {
		t.submodules[sub] = treeDigest(t.root, sub)
	}
	t.subGits = t.readSubmoduleGits()
	return t
}

// resolved is dir with its symlinks resolved (dir itself when that fails).
func resolved(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// watched is a watched entry as read: ok is false for one that is there
// but not a regular file that could be read (a symlink, a FIFO, a file
// over tripwireMaxFile), which always counts as changed.
type watched struct {
	data []byte
	ok   bool
}

// read returns the watched entries as they are now: the git directory's
// and each submodule's below .git/modules.
func (t *Tripwire) read() map[string]watched {
	out := map[string]watched{}
	for _, d := range append([]string{""}, moduleGitDirs(t.gfs, t.git)...) {
		t.readGitDir(d, out)
	}
	return out
}

// readGitDir adds the watched entries of the git directory at the
// .git-relative slash path sub ("" for the top one) to out.
func (t *Tripwire) readGitDir(sub string, out map[string]watched) {
	for _, rel := range tripwireFiles() {
		rel = path.Join(sub, rel)
		data, err := t.gfs.ReadFile(path.Join(t.git, rel), tripwireMaxFile)
		switch {
		case err == nil:
			out[rel] = watched{data: data, ok: true}
		case !errors.Is(err, fs.ErrNotExist):
			out[rel] = watched{} // a link, a FIFO, a directory: there, and changed
		}
	}
	for _, dir := range tripwireDirs() {
		_ = t.gfs.Walk(path.Join(t.git, sub, dir), func(e *safefs.Entry) error {
			if e.IsDir() {
				return nil
			}
			rel := strings.TrimPrefix(e.Rel, t.git+"/")
			if data, err := e.ReadFile(tripwireMaxFile); err == nil {
				out[rel] = watched{data: data, ok: true}
			} else {
				out[rel] = watched{}
			}
			return nil
		})
	}
}

// restore compares the watched files with what was recorded, removes
// added entries, puts back every changed or removed file (a symlink in
// its place or in a parent's is replaced, not followed), and returns the
// changed paths (".git/…"). What it could not put back is in t.lost.
func (t *Tripwire) restore() []string {
	if t == nil {
		return nil
	}
	if !t.gitDir {
		return append(t.restoreDotGit(), t.restoreSubmoduleGits()...)
	}
	now := t.read()
	var changed []string
	for rel := range now { // first: an added link where a directory was recorded goes before its files come back
		if _, ok := t.files[rel]; !ok {
			changed = append(changed, ".git/"+rel)
			if err := t.gfs.Remove(path.Join(t.git, rel)); err != nil {
				t.lost = append(t.lost, fmt.Sprintf(".git/%s (%v)", rel, err))
			}
		}
	}
	for rel, old := range t.files {
		if cur, ok := now[rel]; !ok || !cur.ok || !bytes.Equal(cur.data, old) {
			changed = append(changed, ".git/"+rel)
			if err := t.gfs.WriteFile(path.Join(t.git, rel), old, 0o644); err != nil {
				t.lost = append(t.lost, fmt.Sprintf(".git/%s (%v)", rel, err))
			}
		}
	}
	for rel, old := range t.objects {
		for _, p := range old.changes(t.gfs, path.Join(t.git, rel)) {
			changed = append(changed, ".git/"+strings.TrimPrefix(p, t.git+"/"))
		}
	}
	changed = append(changed, t.restoreSubmoduleGits()...)
	if t.gitlinks = t.restoreGitlinks(); len(t.gitlinks) > 0 {
		changed = append(changed, ".git/index")
	}
	for _, p := range t.gfs.Replaced() {
		if t.git == "." {
			p = path.Join(".git", p)
		}
		changed = append(changed, p)
	}
	if t.root != t.gfs {
		changed = append(changed, t.root.Replaced()...)
	}
	slices.Sort(changed)
	return slices.Compact(changed)
}
