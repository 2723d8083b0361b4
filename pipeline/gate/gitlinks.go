package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// indexMax bounds the index the tripwire keeps (256 MiB; a 25,000-file
// index is about 3 MiB).
const indexMax = 256 << 20

// armedIndex is the index as the run found it, kept so that a gitlink a
// command adds can be taken out again. It is decoded only when it
// changed (a 25,000-file index takes about 150 ms).
type armedIndex struct {
	data    []byte
	present bool // there was an index file
	ok      bool // it was read (or was missing)
}

// indexGitlinks returns the paths of the gitlinks (mode 160000) in the
// index data; ok is false when it cannot be decoded.
func indexGitlinks(data []byte) (map[string]bool, bool) {
	idx := &index.Index{}
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
		return nil, false
	}
	out := map[string]bool{}
	for _, e := range idx.Entries {
		if e.Mode == filemode.Submodule {
			out[e.Name] = true
		}
	}
	return out, true
}

// armIndex reads the index of the git directory.
func (t *Tripwire) armIndex() {
	data, err := t.gfs.ReadFile(path.Join(t.git, "index"), indexMax)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.index = armedIndex{ok: true}
	case err == nil:
		t.index = armedIndex{data: data, present: true, ok: true}
	}
}

// restoreGitlinks finds gitlinks a command added to the index: the
// user's `git status` runs `git status` inside each, which runs the
// core.fsmonitor of the nested repository's own config. It puts the
// index back as the run found it and returns the new gitlinks' paths.
func (t *Tripwire) restoreGitlinks() []string {
	if !t.index.ok {
		return nil // not read when armed: nothing to compare or put back
	}
	idx := path.Join(t.git, "index")
	data, err := t.gfs.ReadFile(idx, indexMax)
	if errors.Is(err, fs.ErrNotExist) || err == nil && t.index.present && bytes.Equal(data, t.index.data) {
		return nil
	}
	old := map[string]bool{}
	if t.index.present {
		if old, _ = indexGitlinks(t.index.data); old == nil {
			return nil // the user's own index git cannot read either
		}
	}
	var added []string
	if links, ok := indexGitlinks(data); err == nil && ok {
		for p := range links {
			if !old[p] {
				added = append(added, p)
			}
		}
	} else {
		added = append(added, "(an index git cannot read)")
	}
	if len(added) == 0 {
		return nil
	}
	if t.index.present {
		err = t.gfs.WriteFile(idx, t.index.data, 0o644)
	} else {
		err = t.gfs.Remove(idx)
	}
	if err != nil {
		t.lost = append(t.lost, fmt.Sprintf(".git/index (%v)", err))
	}
	slices.Sort(added)
	return added
}

// readSubmoduleGits reads the .git entry of each submodule recorded when
// armed: a gitfile's bytes ("gitdir: …", which git follows into the
// submodule's git directory), or an embedded git directory's watched
// files. Keys are work-tree-relative slash paths. A command that points
// a gitfile at a repository of its own, or edits an embedded config,
// has the user's `git status` run that repository's core.fsmonitor.
func (t *Tripwire) readSubmoduleGits() map[string]watched {
	out := map[string]watched{}
	for sub := range t.submodules {
		g := path.Join(sub, ".git")
		fi, err := t.root.Lstat(g)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil || fi.Mode.Type() != 0 && !fi.IsDir():
			out[g] = watched{} // a symlink, a FIFO, behind a link: there, and changed
		case fi.IsDir():
			for _, rel := range tripwireFiles() {
				if data, err := t.root.ReadFile(path.Join(g, rel), tripwireMaxFile); err == nil {
					out[path.Join(g, rel)] = watched{data: data, ok: true}
				} else if !errors.Is(err, fs.ErrNotExist) {
					out[path.Join(g, rel)] = watched{}
				}
			}
			_ = t.root.Walk(path.Join(g, "hooks"), func(e *safefs.Entry) error {
				if !e.IsDir() {
					data, err := e.ReadFile(tripwireMaxFile)
					out[e.Rel] = watched{data: data, ok: err == nil}
				}
				return nil
			})
		default:
			data, err := t.root.ReadFile(g, tripwireMaxFile)
			out[g] = watched{data: data, ok: err == nil}
		}
	}
	return out
}

// restoreSubmoduleGits puts back the submodules' .git entries a command
// changed (removing what it added) and returns their paths.
func (t *Tripwire) restoreSubmoduleGits() []string {
	now := t.readSubmoduleGits()
	var changed []string
	for rel := range now {
		if _, ok := t.subGits[rel]; !ok {
			changed = append(changed, rel)
			if err := t.root.Remove(rel); err != nil {
				t.lost = append(t.lost, fmt.Sprintf("%s (%v)", rel, err))
			}
		}
	}
	for rel, old := range t.subGits {
		if cur, ok := now[rel]; old.ok && (!ok || !cur.ok || !bytes.Equal(cur.data, old.data)) {
			changed = append(changed, rel)
			if err := t.root.WriteFile(rel, old.data, 0o644); err != nil {
				t.lost = append(t.lost, fmt.Sprintf("%s (%v)", rel, err))
			}
		}
	}
	return changed
}
