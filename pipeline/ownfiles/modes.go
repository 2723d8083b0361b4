package ownfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// Modes keeps the modes of the runner's own directories: under
// Landlock only (which has no right for chmod, chown or utime) and with
// the sandbox off, a command may change the mode of any directory its
// user owns, outside the work tree too. `chmod 000` of the out dir, its
// tool-output directory or the run's temporary directory made every
// later create there fail for a non-root runner: the tool
// outputs, the patch, result.json and summary.md were lost. The modes are
// recorded when the runner makes or first uses each directory (and those
// of the directories above it that the runner's user owns), and put back
// after every command, before a write there that failed with a permission
// error is tried again, and once no command runs; what was changed fails
// the run with gate runner_state. Holding directory descriptors would not
// help: openat(2) still checks the directory's mode. Safe for concurrent
// use; the zero value is not (NewModes).
//
// Paths are resolved when guarded (before any command runs) and then
// opened from "/" without following a symlink (internal/safefs): a link
// a command put in the place of one of them or of a parent is never
// followed to chmod what it points to.
type Modes struct {
	mu      sync.Mutex
	fs      *safefs.Root      // "/"
	real    map[string]string // a guarded path (absolute) → resolved when guarded
	uid     uint32
	order   []string               // directories in the order recorded
	modes   map[string]fs.FileMode // directory → its mode bits when recorded
	changed map[string]string      // directory → "0755 → 0000", the first change seen
}

// modeBits are the bits of a directory's mode that are put back.
const modeBits = fs.ModePerm | fs.ModeSticky | fs.ModeSetgid | fs.ModeSetuid

// NewModes returns a Modes that guards nothing yet.
func NewModes() *Modes {
	return &Modes{fs: safefs.New("/"), real: map[string]string{}, uid: uint32(os.Geteuid()),
		modes: map[string]fs.FileMode{}, changed: map[string]string{}}
}

// rootRel is the absolute path p relative to "/", for m.fs.
func rootRel(p string) string {
	if rel := strings.TrimPrefix(filepath.Clean(p), "/"); rel != "" {
		return rel
	}
	return "."
}

// Guard records the modes of the directories at paths (made absolute)
// and of every directory above each that the runner's user owns ("/"
// excepted), unless recorded before. Missing paths are skipped.
func (m *Modes) Guard(paths ...string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if real, ok := m.real[abs]; ok {
			abs = real
		} else if real, err := filepath.EvalSymlinks(abs); err == nil {
			m.real[abs] = real
			abs = real
		}
		for d := abs; d != "/" && d != "."; d = filepath.Dir(d) {
			if _, ok := m.modes[d]; ok {
				continue
			}
			fi, err := m.fs.Lstat(rootRel(d))
			if err != nil || !fi.IsDir() {
				break
			}
			if fi.Uid != m.uid {
				break // nobody running as the runner's user can chmod it, nor above it (usually)
			}
			m.modes[d] = fi.Mode & modeBits
			m.order = append(m.order, d)
		}
	}
}

// Restore puts back the mode of every recorded directory that changed
// and reports whether one had. A directory that is gone or replaced is
// left to the other checks (the out dir's mirror).
func (m *Modes) Restore() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	fixed := false
	for _, d := range m.order { // top-down: a parent is searchable before its child is looked at
		fi, err := m.fs.Lstat(rootRel(d))
		if err != nil || !fi.IsDir() {
			continue // gone, replaced, or behind a link: left to the out dir's mirror
		}
		want, got := m.modes[d], fi.Mode&modeBits
		if got == want {
			continue
		}
		if err := m.fs.Chmod(rootRel(d), want); err != nil {
			continue
		}
		fixed = true
		if _, seen := m.changed[d]; !seen {
			m.changed[d] = fmt.Sprintf("%04o → %04o", unixBits(want), unixBits(got))
		}
	}
	return fixed
}

// FixTree gives the runner's own user back read and write (and search,
// for directories) on every entry below root that lost them (the runner
// never makes one it cannot read: a command took them), recording each
// as changed. Called once no command runs, on the out dir.
func (m *Modes) FixTree(root string) {
	if m == nil || root == "" {
		return
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if real, ok := m.real[abs]; ok {
		abs = real // as resolved when guarded: a link planted since is not followed
	}
	_ = m.fs.Walk(rootRel(abs), func(e *safefs.Entry) error {
		need := fs.FileMode(0o600)
		if e.IsDir() {
			need = 0o700
		}
		if e.Uid != m.uid || e.Mode&need == need || !e.IsDir() && !e.Mode.IsRegular() {
			return nil
		}
		got := e.Mode & modeBits
		p := "/" + e.Rel
		if m.fs.Chmod(e.Rel, got|need) == nil {
			if _, seen := m.changed[p]; !seen {
				m.changed[p] = fmt.Sprintf("%04o → %04o", unixBits(got|need), unixBits(got))
			}
		}
		return nil
	})
}

// Changes returns the directories and files whose mode a command changed,
// sorted, each with "from → to".
func (m *Modes) Changes() (paths, what []string) {
	if m == nil {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.changed {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		what = append(what, p+" "+m.changed[p])
	}
	return paths, what
}

// unixBits is a mode as chmod(1) writes it (setuid 4000, setgid 2000,
// sticky 1000, then the permission bits).
func unixBits(m fs.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

// Message is the runner_state gate's message for the modes put back,
// "" when none changed; paths are relative to workTree where inside it.
func (m *Modes) Message(workTree string) (paths []string, msg string) {
	abs, what := m.Changes()
	if len(abs) == 0 {
		return nil, ""
	}
	for i, p := range abs {
		paths = append(paths, TreeRel(workTree, p))
		what[i] = TreeRel(workTree, p) + strings.TrimPrefix(what[i], p)
	}
	return paths, "a command changed the mode of the runner's own directories or files (" + strings.Join(what, ", ") +
		": Landlock has no right for chmod, and a non-root runner cannot write where its user may not); the runner put the modes back"
}

// RetryPerm runs op and, when it fails with a permission error and the
// guarded modes had been changed (and are now put back), runs it again.
func RetryPerm(m *Modes, op func() error) error {
	err := op()
	if errors.Is(err, fs.ErrPermission) && m.Restore() {
		err = op()
	}
	return err
}
