package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// Set is the files the runner writes through it and the directories it
// watches. The zero Set is not usable; make one with New. Its methods are
// safe for concurrent use.
//
// Paths are kept resolved: before Start (no command has run) a path's
// directory is resolved with filepath.EvalSymlinks and remembered; after
// it, only what was remembered is used, so a link a command planted
// since is never followed, while a link the user had (a symlinked
// .runner) is kept.
type Set struct {
	mu    sync.Mutex
	dir   string // the mirror directory; "" until Start
	files []*File
	dirs  map[string]bool // directories made through the Set (resolved paths)
	roots []string        // watched directories (resolved paths)
	// between are the directories from below a watched directory's top
	// down to it (Watch), which must stay directories
	between []string
	// existing are the entries below watched directories that were there
	// when Watch was called (a reused out dir, a file the caller put there
	// first), resolved, with their type: not the run's record, kept as
	// they are.
	existing map[string]fs.FileMode
	n        int // mirror files made
	// resolved remembers directories (clean absolute, as given) → resolved
	resolved map[string]string
	// top is Watch's top, resolved, and topFS the same directory: every
	// path below it is opened beneath it without following a symlink
	// (internal/safefs)
	top   string
	topFS *safefs.Root
}

// New returns a Set that writes plain files until Start.
func New() *Set {
	return &Set{dirs: map[string]bool{}, resolved: map[string]string{}, existing: map[string]fs.FileMode{}}
}

// realPath is p (absolute) with its directory resolved (see Set); called
// with s.mu held.
func (s *Set) realPath(p string) string {
	p = absClean(p)
	dir, rest := filepath.Dir(p), filepath.Base(p)
	for {
		if r, ok := s.resolved[dir]; ok {
			return filepath.Join(r, rest)
		}
		if s.dir == "" {
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				s.resolved[dir] = r
				return filepath.Join(r, rest)
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
	}
}

// realDir is the directory d resolved itself too; called with s.mu held.
func (s *Set) realDir(d string) string { return filepath.Dir(s.realPath(filepath.Join(d, "_"))) }

// loc is where a path is opened: beneath the Set's top when it lies
// below it, else beneath its resolved parent directory.
type loc struct {
	fs  *safefs.Root
	rel string
}

// real is the loc's path.
func (l loc) real() string { return filepath.Join(l.fs.Dir(), filepath.FromSlash(l.rel)) }

// locate returns the loc of the path p as given.
func (s *Set) locate(p string) loc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.locateReal(s.realPath(p))
}

// locateReal is the loc of a resolved path; called with s.mu held.
func (s *Set) locateReal(p string) loc {
	if s.top != "" && strings.HasPrefix(p, s.top+string(filepath.Separator)) {
		rel, _ := filepath.Rel(s.top, p)
		return loc{s.topFS, filepath.ToSlash(rel)}
	}
	return loc{safefs.New(filepath.Dir(p)), filepath.Base(p)}
}

// Create creates the file at path (whatever is there is removed first,
// never followed; no symlink below Watch's top is followed) and mirrors
// it once the Set is started.
func (s *Set) Create(path string) (*File, error) {
	l := s.locate(path)
	f, err := l.fs.Create(l.rel, 0o644)
	if err != nil {
		return nil, err
	}
	return s.add(f, path, l)
}

// CreateTemp is os.CreateTemp (the last "*" of pattern is replaced by a
// random string), opened as Create opens, and mirrored once the Set is
// started.
func (s *Set) CreateTemp(dir, pattern string) (*File, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		path := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64()%1e10, 10)+suffix)
		l := s.locate(path)
		f, err := l.fs.OpenFile(l.rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return s.add(f, path, l)
	}
}

// MkdirAll makes dir and its parents (below Watch's top a symlink or file
// in the way is replaced, not followed); the directories it names are
// the runner's, so Restore does not take them for added entries.
func (s *Set) MkdirAll(dir string) error {
	s.mu.Lock()
	real := s.realDir(dir)
	l := s.locateReal(real)
	if l.fs != s.topFS || s.topFS == nil {
		l = s.dirBase(real)
	}
	s.mu.Unlock()
	var err error
	if l.fs != nil {
		err = l.fs.MkdirAll(l.rel, 0o755)
	} else {
		err = os.MkdirAll(real, 0o755) // before Start: no command has run yet
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirs[real] = true
	s.resolved[absClean(dir)] = real
	return nil
}

// listBelow returns the entries below root (resolved, before any command
// ran) and their types (nil when root cannot be read).
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

// dirBase is the loc of the resolved directory d outside top, beneath
// the nearest directory the Set made or resolved above it; fs is nil
// when there is none (before Start: d is made with os.MkdirAll). Called
// with s.mu held.
func (s *Set) dirBase(d string) loc {
	for a := filepath.Dir(d); a != filepath.Dir(a); a = filepath.Dir(a) {
		if s.dirs[a] || s.dir == "" && slices.Contains(slices.Collect(maps.Values(s.resolved)), a) {
			rel, _ := filepath.Rel(a, d)
			return loc{safefs.New(a), filepath.ToSlash(rel)}
		}
	}
	return loc{}
}

// Watch adds root (an existing directory the runner made) to the watched
// directories: Restore removes every entry below it that was not made
// through the Set and was not there already (with the same type) when
// Watch was called. The directories from below top (the work tree) down
// to root must stay directories too: a link put in the place of one
// (.runner/runs → elsewhere) is removed and the directory made again.
// top may be "" (root alone). Call it before Start.
func (s *Set) Watch(root, top string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	root = s.realDir(root)
	maps.Copy(s.existing, listBelow(root))
	s.roots = append(s.roots, root)
	s.dirs[root] = true
	if top == "" {
		s.between = append(s.between, root)
		return
	}
	top = s.realDir(top)
	if s.top == "" {
		s.top, s.topFS = top, safefs.New(top)
	}
	if !strings.HasPrefix(root, top+string(filepath.Separator)) {
		s.between = append(s.between, root) // resolved out of top (a symlinked .runner): root alone
		return
	}
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

// add registers f (at path, opened at l) and mirrors it when the Set is
// started.
func (s *Set) add(f *os.File, path string, l loc) (*File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mf := &File{set: s, path: path, f: f, loc: l}
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
		if s.fixDir(d) {
			changed = append(changed, d)
		}
	}
	keep := map[string]bool{}
	for _, f := range s.files {
		real := f.loc.real()
		keep[real] = true
		for d := filepath.Dir(real); s.under(d); d = filepath.Dir(d) {
			keep[d] = true
		}
		same, rerr := f.restore()
		if rerr != nil {
			errs = append(errs, rerr)
		}
		if !same {
			changed = append(changed, real)
		}
	}
	for d := range s.dirs {
		keep[d] = true
	}
	for _, root := range s.roots {
		changed = append(changed, s.removeAdded(root, keep)...)
	}
	if s.topFS != nil {
		for _, rel := range s.topFS.Replaced() {
			changed = append(changed, filepath.Join(s.top, filepath.FromSlash(rel)))
		}
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

// fixDir makes dir (resolved) a directory again when something else (a
// link, a file) took its place, never following a link; it reports
// whether it had to. Called with s.mu held.
func (s *Set) fixDir(dir string) bool {
	l := s.locateReal(dir)
	if fi, err := l.fs.Lstat(l.rel); err == nil && fi.IsDir() {
		return false
	}
	_ = l.fs.Remove(l.rel) // a link is removed, not followed
	_ = l.fs.MkdirAll(l.rel, 0o755)
	return true
}

// removeAdded removes the entries below root that keep does not hold and
// returns their paths. A directory that is kept is walked; one that is
// not is removed whole. No symlink is followed. Called with s.mu held.
func (s *Set) removeAdded(root string, keep map[string]bool) []string {
	var added []string
	l := s.locateReal(root)
	_ = l.fs.Walk(l.rel, func(e *safefs.Entry) error {
		if e.Rel == l.rel {
			return nil
		}
		p := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(e.Rel, l.rel+"/")))
		if keep[p] && s.dirs[p] && !e.IsDir() { // a directory of the runner's made a link or file
			added = append(added, p)
			_ = l.fs.Remove(e.Rel)
			_ = l.fs.MkdirAll(e.Rel, 0o755)
			return nil
		}
		if keep[p] {
			return nil // a kept file of another type: File.restore rewrote it
		}
		if t, ok := s.existing[p]; ok && t == e.Mode.Type() {
			return nil // there before the run: not its record
		}
		added = append(added, p)
		_ = l.fs.Remove(e.Rel)
		if e.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	return added
}

// restore compares the file with its mirror and rewrites it from the
// mirror when they differ (whatever is in its place or a parent's is
// replaced, never followed); it reports whether they were the same.
func (f *File) restore() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mpath == "" {
		return true, nil
	}
	if sameContent(f.loc, f.mpath) {
		return true, nil
	}
	nf, err := f.loc.fs.Create(f.loc.rel, 0o644)
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

// sameContent reports whether the regular file at l (not followed when
// it or a parent is a link) holds exactly the bytes of the mirror.
func sameContent(l loc, mirror string) bool {
	a, err := l.fs.Open(l.rel)
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
