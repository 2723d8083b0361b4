package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/internal/gitignore"
	"github.com/seed43ef5acb/runner/internal/safefs"
	"github.com/seed43ef5acb/runner/internal/treewalk"
)

// TrackPaths is the fast path after tools that report the paths they
// wrote: it re-stats only paths (work-tree-relative slash paths, or
// absolute paths inside the work tree; others are ignored), rescanning a
// path that is a directory (or holds a changed .gitignore), and reuses
// the rest of the last tracked state; paths whose standing in the user's
// index changed are re-stat'ed too. It falls back to a full Track when
// there is no previous state in this Store, when the root .gitignore
// changed or the index changed more than maxIndexDiff paths.
func (s *Store) TrackPaths(ctx context.Context, paths []string) (Tree, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	tree, full, err := s.trackPaths(ctx, paths)
	if full != "" {
		return s.track(ctx)
	}
	return tree, err
}

// TrackChanged records the work tree after a command that may have
// written anywhere (a bash call, a check). With Options.Watch and a
// working watcher it re-stats only what inotify reported since the last
// Track (plus extra paths, and every nested repository, whose HEAD may
// have moved without an event in the work tree), else it walks the whole
// tree; Tracking says which, and why a full walk.
func (s *Store) TrackChanged(ctx context.Context, extra []string) (Tree, Tracking, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", Tracking{}, ErrClosed
	}
	reason := s.watchErr
	var paths []string
	if s.watch == nil && reason == "" {
		reason = "watching is off"
	}
	if s.watch != nil {
		var broken string
		paths, broken = s.watch.take()
		switch {
		case broken != "":
			reason = broken
		case s.state == nil:
			reason = "no previous snapshot in this store"
		}
	}
	if reason == "" {
		for p := range s.gitlinks {
			paths = append(paths, p)
		}
		tree, full, err := s.trackPaths(ctx, append(paths, extra...))
		if full == "" {
			return tree, Tracking{Method: "watch"}, err
		}
		reason = full
	}
	tree, err := s.track(ctx)
	return tree, Tracking{Method: "full", Reason: reason}, err
}

// maxIndexDiff is how many paths an index change may add or drop (git add,
// git rm, a checkout) before a full walk is cheaper than re-stating each.
const maxIndexDiff = 2000

// trackPaths updates the state for paths; full is why a full walk is
// needed instead ("" when none is). An error drops the state, so the next
// Track walks in full.
func (s *Store) trackPaths(ctx context.Context, paths []string) (_ Tree, full string, err error) {
	if s.state == nil {
		return "", "no previous snapshot in this store", nil
	}
	defer func() {
		if err != nil {
			s.state = nil
		}
	}()
	tracked, err := loadTracked(s.repo, s.tracked)
	if err != nil {
		return "", "", err
	}
	if tracked != s.tracked {
		changed, ok := trackedDiff(s.tracked, tracked, maxIndexDiff)
		if !ok {
			return "", fmt.Sprintf("the index changed more than %d paths", maxIndexDiff), nil
		}
		paths = append(paths, changed...)
		s.tracked = tracked // dirContext and visit judge by the new index
	}
	w := &walker{s: s, ctx: ctx, tracked: tracked, scanStart: time.Now().UnixNano()}
	root := s.state
	var rels []string
	for _, p := range paths {
		if rel, ok := s.relPath(p); ok {
			rels = append(rels, rel)
		}
	}
	sortPaths(rels)
	var done []string // directories rescanned whole: paths below need nothing
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		if under(rel, done) {
			continue
		}
		if strings.HasSuffix("/"+rel, "/.gitignore") {
			// its rules decide what is in the directory: walk it whole
			if rel == ".gitignore" {
				return "", "the root .gitignore changed", nil
			}
			rel = rel[:len(rel)-len("/.gitignore")]
		}
		var rescanned bool
		root, rescanned, err = s.updatePath(ctx, w, root, rel)
		if err != nil {
			return "", "", err
		}
		if rescanned {
			done = append(done, rel)
		}
	}
	if err := s.rehash(root); err != nil {
		return "", "", err
	}
	if root != s.state {
		s.state, s.cacheDirty = root, true
	}
	return Tree(root.tree.String()), "", nil
}

// trackedDiff lists the paths whose standing in the index differs between
// old and cur: files added or removed, gitlinks changed, directories that
// gained or lost their last tracked file. ok is false past limit paths.
func trackedDiff(old, cur *trackedSet, limit int) (paths []string, ok bool) {
	add := func(p string) bool {
		paths = append(paths, p)
		return len(paths) <= limit
	}
	for p, o := range old.files {
		n, in := cur.files[p]
		if !in || (o.mode == modeGitlink || n.mode == modeGitlink) && (o.mode != n.mode || o.hash != n.hash) {
			if !add(p) {
				return nil, false
			}
		}
	}
	for p := range cur.files {
		if _, in := old.files[p]; !in && !add(p) {
			return nil, false
		}
	}
	for d := range old.dirs {
		if !cur.dirs[d] && !add(d) {
			return nil, false
		}
	}
	for d := range cur.dirs {
		if !old.dirs[d] && !add(d) {
			return nil, false
		}
	}
	return paths, true
}

// under reports whether rel lies below one of dirs.
func under(rel string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// sortPaths sorts slash paths so that a directory comes before what is
// below it.
func sortPaths(p []string) { slices.Sort(p) }

// relPath turns a caller's path into a clean work-tree-relative slash
// path. ok is false for paths outside the work tree or inside .git.
func (s *Store) relPath(p string) (string, bool) {
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(s.root, p)
		if err != nil {
			return "", false
		}
		p = r
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".git" {
			return "", false
		}
	}
	return p, true
}

// updatePath brings one path of the state up to date, as the full walk
// would see it: a file is re-stat'ed (and hashed when its stat changed), a
// directory is walked whole, a path that is gone, ignored or excluded is
// dropped. rescanned says rel was walked as a directory.
func (s *Store) updatePath(ctx context.Context, w *walker, root *dirNode, rel string) (_ *dirNode, rescanned bool, err error) {
	dir := ""
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir = rel[:i]
	}
	var ep *entry
	if stack, trackedOnly, ok := s.dirContext(dir); ok {
		// The directory is opened beneath the root following no symlink:
		// a path below a directory swapped for a link is gone, as the
		// full walk finds it, never read through the link.
		dirfd, err := s.fs.OpenDirFd(dir)
		var fi fs.FileInfo
		if err == nil {
			fi, err = lstatIn(dirfd, rel[len(dir):])
			defer unix.Close(dirfd)
		}
		switch {
		case err == nil:
			e, keep, err := s.visitPath(ctx, w, lookupDir(root, dir), dir, dirfd, fi, stack, trackedOnly)
			if err != nil {
				return root, false, err
			}
			rescanned = fi.IsDir()
			if keep {
				ep = &e
				if e.mode == modeGitlink {
					s.gitlinks[rel] = true
				}
			}
		case !gone(err):
			return root, false, fmt.Errorf("stat %s: %w", rel, err)
		}
	}
	return setPath(root, strings.Split(rel, "/"), ep), rescanned, nil
}

// gone reports whether err says a path is not (or no longer) in the work
// tree: missing, below a file, or below a symlink.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, safefs.ErrSymlink) ||
		errors.Is(err, syscall.ELOOP)
}

// lstatIn lstats name (a leading "/" is dropped) in the directory dirfd.
func lstatIn(dirfd int, name string) (fs.FileInfo, error) {
	name = strings.TrimPrefix(name, "/")
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil {
			return statFileInfo{name: name, st: st}, nil
		}
		if !errors.Is(err, unix.EINTR) {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
	}
}

// statFileInfo is the fs.FileInfo of an lstat.
type statFileInfo struct {
	name string
	st   unix.Stat_t
}

func (i statFileInfo) Name() string       { return i.name }
func (i statFileInfo) Size() int64        { return i.st.Size }
func (i statFileInfo) ModTime() time.Time { return time.Unix(0, i.st.Mtim.Nano()) }
func (i statFileInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i statFileInfo) Sys() any           { return &i.st }
func (i statFileInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	default:
		m |= fs.ModeDevice
	}
	return m
}

// visitPath decides one entry of the directory dir as the full walk's
// classify does, stating a file and walking a directory.
func (s *Store) visitPath(ctx context.Context, w *walker, prev *dirNode, dir string, dirfd int, fi fs.FileInfo, stack *gitignore.Stack, trackedOnly bool) (entry, bool, error) {
	rel := joinRel(dir, fi.Name())
	typ := fi.Mode().Type()
	if typ != 0 && typ != fs.ModeDir && typ != fs.ModeSymlink {
		return entry{}, false, nil // sockets, FIFOs, devices
	}
	te := &treewalk.Entry{Rel: rel, Name: fi.Name(), Type: typ}
	te.Ignored = trackedOnly || stack.Excluded(s.prefix+rel, typ == fs.ModeDir)
	switch w.classify(prev, te) {
	case treewalk.Skip:
		return entry{}, false, nil
	case treewalk.Keep:
		if e, ok := te.Data.(*entry); ok {
			return *e, true, nil
		}
		return w.fileEntry(dirfd, filepath.Join(s.root, rel), fi.Name(), prev)
	}
	node, isRepo, err := w.walkDir(ctx, rel, te.Data.(*dirState).prev, stack, te.Ignored)
	if err != nil {
		return entry{}, false, err
	}
	if isRepo {
		h, ok := s.gitlinkHead(rel, plumbing.ZeroHash)
		if !ok || te.Ignored {
			return entry{}, false, nil
		}
		return entry{name: fi.Name(), mode: modeGitlink, hash: h}, true, nil
	}
	if len(node.entries) == 0 {
		return entry{}, false, nil
	}
	return entry{name: fi.Name(), mode: modeDir, dir: node, hash: node.tree}, true, nil
}

// dirContext returns the ignore rules that apply to the entries of the
// work-tree-relative directory dir ("" for the root) and whether only
// tracked files count there (it is inside an ignored directory), as the
// full walk would reach it. ok is false when nothing in dir is part of
// snapshots: it or a parent is excluded, missing from the walk (ignored
// without tracked files) or inside a nested repository.
func (s *Store) dirContext(dir string) (stack *gitignore.Stack, trackedOnly, ok bool) {
	stack = s.base
	readIgnore := func(d string) {
		if trackedOnly {
			return
		}
		if b, err := s.fs.ReadFile(path.Join(d, ".gitignore"), gitignore.MaxFile); err == nil {
			base := s.prefix
			if d != "" {
				base += d + "/"
			}
			stack = stack.Push(gitignore.ParseFile(b, base))
		}
	}
	readIgnore("")
	if dir == "" {
		return stack, false, true
	}
	p := ""
	for _, c := range strings.Split(dir, "/") {
		p = joinRel(p, c)
		if s.exclude[p] {
			return nil, false, false
		}
		if tf, ok := s.tracked.files[p]; ok && tf.mode == modeGitlink {
			return nil, false, false
		}
		if _, err := s.fs.Lstat(p + "/.git"); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil, false, false // inside a nested repository, or not a directory beneath the root
		}
		excl := trackedOnly || stack.Excluded(s.prefix+p, true)
		if excl && !s.tracked.dirs[p] {
			return nil, false, false
		}
		trackedOnly = excl
		readIgnore(p)
	}
	return stack, trackedOnly, true
}

// lookupDir finds the directory node at rel ("" for root) in the state.
func lookupDir(root *dirNode, rel string) *dirNode {
	if rel == "" {
		return root
	}
	if e := lookup(root, rel); e != nil && e.mode == modeDir {
		return e.dir
	}
	return nil
}

// lookup finds the entry at rel in the state.
func lookup(d *dirNode, rel string) *entry {
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		j := d.find(c)
		if j < 0 {
			return nil
		}
		e := &d.entries[j]
		if i == len(comps)-1 {
			return e
		}
		if e.mode != modeDir {
			return nil
		}
		d = e.dir
	}
	return nil
}

// setPath returns a copy of d with the entry at comps set to e, or removed
// when e is nil. Only nodes on the path are copied (and marked for
// rehashing); d itself is not modified. Emptied directories disappear.
func setPath(d *dirNode, comps []string, e *entry) *dirNode {
	i := d.find(comps[0])
	if e == nil && i < 0 {
		return d
	}
	nd := &dirNode{}
	if d != nil {
		nd.entries = slices.Clone(d.entries)
	}
	if len(comps) == 1 {
		if i >= 0 {
			nd.entries = slices.Delete(nd.entries, i, i+1)
		}
		if e != nil {
			nd.entries = append(nd.entries, *e)
			sortEntries(nd.entries)
		}
		return nd
	}
	var child *dirNode
	if i >= 0 && nd.entries[i].mode == modeDir {
		child = nd.entries[i].dir
	} else if i >= 0 && e == nil {
		return d // a file or gitlink where a directory was expected
	}
	if i >= 0 && nd.entries[i].mode == modeGitlink {
		return d // never write into a nested repository
	}
	nc := setPath(child, comps[1:], e)
	if nc == child {
		return d
	}
	if i >= 0 {
		nd.entries = slices.Delete(nd.entries, i, i+1)
	}
	if len(nc.entries) > 0 {
		nd.entries = append(nd.entries, entry{name: comps[0], mode: modeDir, dir: nc})
		sortEntries(nd.entries)
	}
	return nd
}

// rehash computes the trees of nodes changed by setPath, bottom-up.
func (s *Store) rehash(d *dirNode) error {
	if d.valid {
		return nil
	}
	for i := range d.entries {
		e := &d.entries[i]
		if e.mode != modeDir {
			continue
		}
		if err := s.rehash(e.dir); err != nil {
			return err
		}
		e.hash = e.dir.tree
	}
	return s.storeTree(d)
}
