package pipeline

import (
	"bytes"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// stateTripwireCap bounds the bytes of earlier runs' files the state
// tripwire keeps to put back (64 MiB); beyond it a file's digest alone is
// kept, so a change is caught but cannot be undone.
const stateTripwireCap = 64 << 20

// stateTripwire is what the runner's own state directory (.runner in the
// work tree: earlier runs' logs, patches, results and histories) held when
// the run started, outside this run's out dir. It is armed only where no
// layer makes .runner read-only: under Landlock only (which can add
// rights below the writable work tree but not take them away, as for
// .git) and with the sandbox off.
type stateTripwire struct {
	root   string            // <work tree>/.runner
	skip   string            // this run's out dir, when inside root
	bytes  map[string][]byte // root-relative slash path → content
	digest map[string][sha256.Size]byte
}

// armStateTripwire records .runner's files when the sandbox's layers do
// not protect them (nil otherwise, or when there is no .runner).
func (r *execRun) armStateTripwire() *stateTripwire {
	if r.sandbox != nil && slices.Contains(r.sandbox.Layers(), sandbox.LayerNamespaces) {
		return nil // read-only in the sandbox (setupSandbox)
	}
	root := filepath.Join(r.workTree, ".runner")
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return nil
	}
	t := &stateTripwire{root: root, bytes: map[string][]byte{}, digest: map[string][sha256.Size]byte{}}
	if out, err := filepath.Abs(r.outDir); err == nil && strings.HasPrefix(out, root+string(filepath.Separator)) {
		t.skip = out
	}
	kept := 0
	for rel, data := range t.read() {
		t.digest[rel] = sha256.Sum256(data)
		if kept+len(data) <= stateTripwireCap {
			t.bytes[rel] = data
			kept += len(data)
		}
	}
	return t
}

// read returns .runner's regular files outside this run's out dir, and
// every other entry (a link, a FIFO) as empty content, so that a planted
// one counts as added.
func (t *stateTripwire) read() map[string][]byte {
	out := map[string][]byte{}
	_ = filepath.WalkDir(t.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // gone meanwhile: seen as removed
		}
		if t.skip != "" && (p == t.skip || strings.HasPrefix(p, t.skip+string(filepath.Separator))) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(t.root, p)
		data := []byte{}
		if d.Type().IsRegular() {
			data, _ = os.ReadFile(p)
		}
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	return out
}

// Restore compares .runner with what was recorded, puts back every
// changed or removed file it kept the bytes of, deletes added entries, and
// returns the changed paths (".runner/…") and those it could not put back.
func (t *stateTripwire) Restore() (changed, lost []string) {
	if t == nil {
		return nil, nil
	}
	now := t.read()
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
		p := filepath.Join(t.root, filepath.FromSlash(rel))
		_ = os.Remove(p) // a link planted in its place is not followed
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, old, 0o644); err != nil || !bytes.Equal(readOrNil(p), old) {
			lost = append(lost, ".runner/"+rel)
		}
	}
	for rel := range now {
		if _, ok := t.digest[rel]; !ok {
			changed = append(changed, ".runner/"+rel)
			_ = os.Remove(filepath.Join(t.root, filepath.FromSlash(rel)))
		}
	}
	slices.Sort(changed)
	slices.Sort(lost)
	return changed, lost
}

func readOrNil(p string) []byte {
	data, _ := os.ReadFile(p)
	return data
}
