package ownfiles

import (
	"crypto/sha256"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// StateCap bounds the bytes of earlier runs' files the state
// tripwire keeps to put back (64 MiB); beyond it a file's digest alone is
// kept, so a change is caught but cannot be undone.
const StateCap = 64 << 20

// State is what the runner's own state directory (.runner in the
// work tree: earlier runs' logs, patches, results and histories) held when
// the run started, outside this run's out dir. It is armed only where no
// layer makes .runner read-only: under Landlock only (which can add
// rights below the writable work tree but not take them away, as for
// .git) and with the sandbox off.
type State struct {
	root   *safefs.Root      // the work tree
	skip   string            // this run's out dir, work-tree-relative, when inside .runner
	bytes  map[string][]byte // .runner-relative slash path → content
	digest map[string][sha256.Size]byte
}

// ArmState records the files of .runner in root (the work tree) but for
// those below skip. Skip is this run's out dir, work-tree-relative, or ""
// for none. It returns nil when the work tree has no .runner. Arm it only
// where no sandbox layer makes .runner read-only.
func ArmState(root *safefs.Root, skip string) *State {
	t := &State{root: root, bytes: map[string][]byte{}, digest: map[string][sha256.Size]byte{}}
	if fi, err := t.root.Lstat(".runner"); err != nil || !fi.IsDir() {
		return nil
	}
	if strings.HasPrefix(skip, ".runner/") {
		t.skip = skip
	}
	kept := 0
	for rel, data := range t.read() {
		t.digest[rel] = sha256.Sum256(data)
		if kept+len(data) <= StateCap {
			t.bytes[rel] = data
			kept += len(data)
		}
	}
	return t
}

// read returns .runner's regular files outside this run's out dir, and
// every other entry (a link, a FIFO) as empty content, so that a planted
// one counts as added. No symlink is followed, .runner's own included.
func (t *State) read() map[string][]byte {
	out := map[string][]byte{}
	_ = t.root.Walk(".runner", func(e *safefs.Entry) error {
		if t.skip != "" && (e.Rel == t.skip || strings.HasPrefix(e.Rel, t.skip+"/")) {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(e.Rel, ".runner/")
		if e.Rel == ".runner" {
			rel = "." // .runner itself is no directory now
		}
		data := []byte{}
		if e.Mode.IsRegular() {
			data, _ = e.ReadFile(-1)
		}
		out[rel] = data
		return nil
	})
	return out
}

// Restore compares .runner with what was recorded, deletes added
// entries, puts back every changed or removed file it kept the bytes of
// (a symlink in its place or a parent's replaced, never followed), and
// returns the changed paths (".runner/…") and those it could not put
// back.
func (t *State) Restore() (changed, lost []string) {
	if t == nil {
		return nil, nil
	}
	now := t.read()
	for rel := range now { // first: a link added where a directory was goes before its files come back
		if _, ok := t.digest[rel]; !ok {
			changed = append(changed, path.Join(".runner", rel))
			_ = t.root.Remove(path.Join(".runner", rel))
		}
	}
	for rel, sum := range t.digest {
		cur, ok := now[rel]
		if ok && sha256.Sum256(cur) == sum {
			continue
		}
		changed = append(changed, ".runner/"+rel)
		old, kept := t.bytes[rel]
		if !kept {
			lost = append(lost, ".runner/"+rel)
			continue
		}
		if err := t.root.WriteFile(path.Join(".runner", rel), old, 0o644); err != nil {
			lost = append(lost, ".runner/"+rel)
		}
	}
	changed = append(changed, t.root.Replaced()...)
	slices.Sort(changed)
	slices.Sort(lost)
	return slices.Compact(changed), lost
}
