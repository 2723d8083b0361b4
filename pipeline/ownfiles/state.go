package ownfiles

import (
	"crypto/sha256"
	"io"
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
	root  *safefs.Root          // the work tree
	skip  string                // this run's out dir, work-tree-relative, when inside .runner
	bytes map[string][]byte     // .runner-relative slash path → content
	files map[string]stateEntry // .runner-relative slash path → what it was
}

// stateEntry is one entry of .runner as recorded: a regular file's size
// and digest; size -1 for anything else (a link, a FIFO).
type stateEntry struct {
	size int64
	sum  [sha256.Size]byte
}

// ArmState records the files of .runner in root (the work tree) but for
// those below skip. Skip is this run's out dir, work-tree-relative, or ""
// for none. It returns nil when the work tree has no .runner. Arm it only
// where no sandbox layer makes .runner read-only.
func ArmState(root *safefs.Root, skip string) *State {
	t := &State{root: root, bytes: map[string][]byte{}, files: map[string]stateEntry{}}
	if fi, err := t.root.Lstat(".runner"); err != nil || !fi.IsDir() {
		return nil
	}
	if strings.HasPrefix(skip, ".runner/") {
		t.skip = skip
	}
	kept := int64(0)
	t.walk(func(rel string, e *safefs.Entry) {
		st := stateEntry{size: -1}
		if e.Mode.IsRegular() {
			st.size = e.Size
			if data, err := e.ReadFile(StateCap - kept); err == nil {
				t.bytes[rel], st.sum = data, sha256.Sum256(data)
				kept += int64(len(data))
			} else {
				st.sum = digestOf(e) // over the cap: its digest alone
			}
		}
		t.files[rel] = st
	})
	return t
}

// walk calls fn for each entry of .runner outside this run's out dir
// but directories, by .runner-relative slash path ("." when .runner
// itself is no directory now). No symlink is followed.
func (t *State) walk(fn func(rel string, e *safefs.Entry)) {
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
		fn(rel, e)
		return nil
	})
}

// digestOf is the SHA-256 of a regular file, streamed: a command's
// sparse terabyte file costs no memory (read whole, it crashed the
// runner). An unreadable file gives zeros.
func digestOf(e *safefs.Entry) [sha256.Size]byte {
	var sum [sha256.Size]byte
	f, err := e.Open()
	if err != nil {
		return sum
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err == nil {
		h.Sum(sum[:0])
	}
	return sum
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
	// A file is read only when its size is as recorded: a command's
	// added or grown file, of any size, is never read.
	now := map[string]stateEntry{}
	t.walk(func(rel string, e *safefs.Entry) {
		st := stateEntry{size: -1}
		if e.Mode.IsRegular() {
			st.size = e.Size
			if old, ok := t.files[rel]; ok && old.size == e.Size {
				st.sum = digestOf(e)
			}
		}
		now[rel] = st
	})
	for rel := range now { // first: a link added where a directory was goes before its files come back
		if _, ok := t.files[rel]; !ok {
			changed = append(changed, path.Join(".runner", rel))
			_ = t.root.Remove(path.Join(".runner", rel))
		}
	}
	for rel, old := range t.files {
		if cur, ok := now[rel]; ok && cur == old {
			continue
		}
		changed = append(changed, ".runner/"+rel)
		data, kept := t.bytes[rel]
		if !kept {
			lost = append(lost, ".runner/"+rel)
			continue
		}
		if err := t.root.WriteFile(path.Join(".runner", rel), data, 0o644); err != nil {
			lost = append(lost, ".runner/"+rel)
		}
	}
	changed = append(changed, t.root.Replaced()...)
	slices.Sort(changed)
	slices.Sort(lost)
	return slices.Compact(changed), lost
}
