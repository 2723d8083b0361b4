package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Set is the files the runner writes through it and the directories it
// watches. The zero Set is not usable; make one with New. Its methods are
// safe for concurrent use.
type Set struct {
	mu    sync.Mutex
	dir   string // the mirror directory; "" until Start
	files []*File
	dirs  map[string]bool // directories made through the Set (clean absolute paths)
	roots []string        // watched directories (clean absolute paths)
	// between are the directories from below a watched directory's top
	// down to it (Watch), which must stay directories
	between []string
	// existing are the entries below watched directories that were there
	// when Watch was called (a reused out dir, a file the caller put there
	// first), with their type: not the run's record, kept as they are.
	existing map[string]fs.FileMode
	n        int // mirror files made
}

// New returns a Set that writes plain files until Start.
func New() *Set { return &Set{dirs: map[string]bool{}, existing: map[string]fs.FileMode{}} }

// Create creates or truncates the file at path (the flags of os.Create)
// and mirrors it once the Set is started.
func (s *Set) Create(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return s.add(f, path)
}

// CreateTemp is os.CreateTemp, mirrored once the Set is started.
func (s *Set) CreateTemp(dir, pattern string) (*File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return s.add(f, f.Name())
}

// MkdirAll is os.MkdirAll; the directories it names are the runner's, so
// Restore does not take them for added entries.
func (s *Set) MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirs[absClean(dir)] = true
	return nil
}

// Watch adds root (an existing directory the runner made) to the watched
// directories: Restore removes every entry below it that was not made
// through the Set and was not there already (with the same type) when
// Watch was called. The directories from below top (the work tree) down
// to root must stay directories too: a link put in the place of one
// (.runner/runs → elsewhere) is removed and the directory made again.
// top may be "" (root alone).
func (s *Set) Watch(root, top string) {
	root = absClean(root)
	existing := listBelow(root)
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.Copy(s.existing, existing)
	s.roots = append(s.roots, root)
	s.dirs[root] = true
	if top == "" {
		s.between = append(s.between, root)
		return
	}
	top = absClean(top)
	var chain []string
	for d := root; d != top && strings.HasPrefix(d, top+string(filepath.Separator)); d = filepath.Dir(d) {
		chain = append(chain, d)
	}
	slices.Reverse(chain) // top-down: a parent is fixed before its child
	s.between = append(s.between, chain...)
}

// Started reports whether Start was called.
func (s *Set) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir != ""
}

// Start mirrors every file of the Set into dir (which must exist and be
// out of the commands' reach) from now on; the files made before are
// copied as they are on disk, so call it before any command runs.
func (s *Set) Start(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		return errors.New("mirror: started twice")
	}
	s.dir = dir
	for _, f := range s.files {
		m, err := s.mirrorFile()
		if err != nil {
			return err
		}
		if err := f.start(m); err != nil {
			return fmt.Errorf("mirror %s: %w", f.path, err)
		}
	}
	return nil
}

// add registers f (at path) and mirrors it when the Set is started.
func (s *Set) add(f *os.File, path string) (*File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mf := &File{set: s, path: path, f: f}
	if s.dir != "" {
		m, err := s.mirrorFile()
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		mf.m, mf.mpath = m, m.Name()
	}
	s.files = append(s.files, mf)
	return mf, nil
}

// mirrorFile creates the next mirror file. Called with s.mu held.
func (s *Set) mirrorFile() (*os.File, error) {
	s.n++
	m, err := os.OpenFile(filepath.Join(s.dir, strconv.Itoa(s.n)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return m, nil
}

// forget drops f (removed by the runner) from the Set.
func (s *Set) forget(f *File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = slices.DeleteFunc(s.files, func(g *File) bool { return g == f })
}

// Restore puts the Set's files back as the runner wrote them: every file
// whose content, type or presence differs from its mirror is rewritten
// from it (a link or directory in its place removed first, never
// followed), a watched directory or a directory between it and a file
// that is a link or not a directory is made a directory again, and every
// entry below a watched directory that was not made through the Set is
// removed. It returns the paths it changed, sorted (a file rewritten, an
// entry removed), and the errors of what it could not put back. Call it
// once no command can run; files still open go on writing to the
// rewritten files. A Set that was not started has nothing to compare and
// returns nothing.
func (s *Set) Restore() (changed []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		return nil, nil
	}
	var errs []error
	for _, d := range s.between {
		if fixDir(d) {
			changed = append(changed, d)
		}
	}
	keep := map[string]bool{}
	for _, f := range s.files {
		keep[absClean(f.path)] = true
		for d := filepath.Dir(absClean(f.path)); s.under(d); d = filepath.Dir(d) {
			keep[d] = true
		}
		same, rerr := f.restore()
		if rerr != nil {
			errs = append(errs, rerr)
		}
		if !same {
			changed = append(changed, f.path)
		}
	}
	for d := range s.dirs {
		keep[d] = true
	}
	for _, root := range s.roots {
		changed = append(changed, removeAdded(root, keep, s.existing)...)
	}
	slices.Sort(changed)
	return slices.Compact(changed), errors.Join(errs...)
}

// under reports whether dir is a watched directory or below one.
func (s *Set) under(dir string) bool {
	for _, r := range s.roots {
		if dir == r || strings.HasPrefix(dir, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// fixDir makes dir a directory again when something else (a link, a
// file) took its place; it reports whether it had to.
func fixDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err == nil && fi.IsDir() {
		return false
	}
	if err == nil {
		_ = os.Remove(dir) // a link is removed, not followed
	}
	_ = os.MkdirAll(dir, 0o755)
	return true
}

// listBelow returns the entries below root and their types (nil when
// root cannot be read).
func listBelow(root string) map[string]fs.FileMode {
	out := map[string]fs.FileMode{}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != root {
			out[p] = d.Type()
		}
		return nil
	})
	return out
}

// removeAdded removes the entries below root that keep does not hold,
// nor existing with the same type, and returns their paths. A directory
// that is kept is walked; one that is not is removed whole (os.RemoveAll
// follows no link).
func removeAdded(root string, keep map[string]bool, existing map[string]fs.FileMode) []string {
	var added []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil //nolint:nilerr // gone meanwhile: nothing to remove
		}
		if keep[p] && (d.IsDir() || d.Type().IsRegular()) {
			return nil
		}
		if keep[p] {
			return nil // a kept file of another type: File.restore rewrote it
		}
		if t, ok := existing[p]; ok && t == d.Type() {
			return nil // there before the run: not its record
		}
		added = append(added, p)
		_ = os.RemoveAll(p)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return added
}

// restore compares the file with its mirror and rewrites it from the
// mirror when they differ; it reports whether they were the same.
func (f *File) restore() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mpath == "" {
		return true, nil
	}
	if sameContent(f.path, f.mpath) {
		return true, nil
	}
	if err := fixParents(f.path); err != nil {
		return false, err
	}
	if err := os.RemoveAll(f.path); err != nil { // a link, a directory, a FIFO in its place
		return false, fmt.Errorf("restore %s: %w", f.path, err)
	}
	nf, err := os.OpenFile(f.path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return false, fmt.Errorf("restore %s: %w", f.path, err)
	}
	src, err := os.Open(f.mpath)
	if err == nil {
		_, err = io.Copy(nf, src)
		_ = src.Close()
	}
	if err != nil {
		_ = nf.Close()
		return false, fmt.Errorf("restore %s: %w", f.path, err)
	}
	if f.closed {
		return false, nf.Close()
	}
	_ = f.f.Close() // the old file: unlinked, or replaced
	f.f = nf        // at its end, where the mirror's offset is
	if off, err := f.m.Seek(0, io.SeekCurrent); err == nil {
		_, _ = nf.Seek(off, io.SeekStart)
	}
	return false, nil
}

// fixParents makes the missing or replaced directories above path
// directories again.
func fixParents(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if err := fixParents(dir); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		_ = os.Remove(dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	return nil
}

// sameContent reports whether the regular file at path (not followed
// when it is a link) holds exactly the bytes of the mirror.
func sameContent(path, mirror string) bool {
	a, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer a.Close()
	b, err := os.Open(mirror)
	if err != nil {
		return false
	}
	defer b.Close()
	ai, err1 := a.Stat()
	bi, err2 := b.Stat()
	if err1 != nil || err2 != nil || !ai.Mode().IsRegular() || ai.Size() != bi.Size() {
		return false
	}
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(a, bufA)
		nb, eb := io.ReadFull(b, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF)
		}
	}
}

// absClean is path made absolute and clean (as is, when that fails).
func absClean(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}
