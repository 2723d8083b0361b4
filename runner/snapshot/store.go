package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/seed43ef5acb/runner/internal/gitignore"
	"github.com/seed43ef5acb/runner/internal/safefs"
)

// Tree is a snapshot: the 40-digit lower-case hex id of a git tree in the
// store. EmptyTree, the tree of an empty directory, is a valid snapshot.
type Tree string

// EmptyTree is git's empty tree.
const EmptyTree Tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Options configure a Store.
type Options struct {
	// WorkTree is the directory to snapshot. It may be a git work tree, a
	// subdirectory of one, or a plain directory.
	WorkTree string
	// StoreDir is the private object store, outside the work tree. Empty
	// means <os.UserCacheDir>/runner/snapshots/<first 16 hex digits of
	// sha256 of the absolute work tree path>.
	StoreDir string
	// Exclude lists work-tree-relative slash paths (files or directories)
	// never part of a snapshot, such as the run's out dir.
	Exclude []string
	// Watch makes the Store watch the work tree with inotify from its first
	// Track on, so that TrackChanged re-stats only what changed instead of
	// walking the whole tree. Where inotify is unavailable TrackChanged
	// walks and says why.
	Watch bool
	// Env looks up environment variables (HOME, XDG_CONFIG_HOME,
	// GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL) to find git's global
	// configuration and excludes file. Nil means os.Getenv.
	Env func(string) string
	// MaxBinaryPatch is the largest side (bytes) of a binary change that a
	// patch carries as a GIT binary patch; a larger one is left out and
	// recorded (FileChange.Omitted). 0 means DefaultMaxBinaryPatch.
	MaxBinaryPatch int64
	// OnWait, when set, is called once when the store is locked by another
	// Store (another run on the same work tree), before Open waits for it,
	// with what that holder wrote into the lock file ("pid 1234"; "" when
	// unknown). It runs on Open's goroutine.
	OnWait func(holder string)
}

// Store records snapshots of one work tree. Its methods are safe for
// concurrent use; they run one at a time. Open holds an exclusive lock on
// the store directory until Close.
type Store struct {
	root     string       // absolute work tree
	fs       *safefs.Root // root, for reads that must follow no symlink a command planted
	storeDir string
	prefix   string // work tree relative to the repository root, "" or "dir/"
	exclude  map[string]bool
	repo     *gitignore.Repo // nil outside a repository
	cfg      gitignore.Config
	base     *gitignore.Stack // excludes file, info/exclude, ancestors' .gitignore
	objects  *objectStore
	maxBin   int64 // Options.MaxBinaryPatch, defaulted
	lock     *os.File
	watch    *watcher        // nil unless Options.Watch and inotify works
	watchErr string          // why there is no watcher despite Options.Watch
	gitlinks map[string]bool // nested repositories in the state (TrackChanged re-reads their HEAD)

	mu         sync.Mutex
	closed     bool
	state      *dirNode // the last tracked tree, nil before the first Track
	tracked    *trackedSet
	cacheDirty bool // state not yet saved to the stat cache
}

// Open opens (creating if needed) the store for opts.WorkTree and locks it,
// waiting while another Store holds the lock. The user's repository is
// only read; its object directory is referenced from the store's
// objects/info/alternates so seeded blobs need no copy.
func Open(ctx context.Context, opts Options) (*Store, error) {
	env := opts.Env
	if env == nil {
		env = os.Getenv
	}
	root, err := filepath.Abs(opts.WorkTree)
	if err != nil {
		return nil, fmt.Errorf("work tree %q: %w", opts.WorkTree, err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("work tree %q: %w", opts.WorkTree, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", root, ErrNotDirectory)
	}
	storeDir, err := storeDirFor(root, opts.StoreDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(storeDir, 0o755); err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	lock, err := acquireLock(ctx, storeDir, opts.OnWait)
	if err != nil {
		return nil, err
	}
	s, err := open(root, storeDir, opts, env)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func open(root, storeDir string, opts Options, env func(string) string) (*Store, error) {
	repo, err := gitignore.FindRepo(root)
	if err != nil {
		return nil, err
	}
	s := &Store{root: root, fs: safefs.New(root), storeDir: storeDir, repo: repo, exclude: map[string]bool{}, gitlinks: map[string]bool{},
		maxBin: opts.MaxBinaryPatch}
	if s.maxBin <= 0 {
		s.maxBin = DefaultMaxBinaryPatch
	}
	for _, e := range opts.Exclude {
		if e = path.Clean(filepath.ToSlash(e)); e != "." && e != "" && !strings.HasPrefix(e, "../") {
			s.exclude[strings.TrimPrefix(e, "/")] = true
		}
	}
	common := ""
	if repo != nil {
		s.prefix, common = repo.Prefix, repo.CommonDir
	}
	if err := initStoreDir(storeDir, common); err != nil {
		return nil, err
	}
	s.cfg = gitignore.LoadConfig(env, repo)
	s.base = gitignore.Base(repo, s.cfg)
	removeUnfinishedPacks(filepath.Join(storeDir, "objects"))
	s.objects = newObjectStore(storeDir, common)
	if opts.Watch {
		if s.watch, err = newWatcher(root); err != nil {
			s.watchErr = "no watcher: " + err.Error()
		}
	}
	return s, nil
}

func storeDirFor(root, dir string) (string, error) {
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("default store directory: %w", err)
		}
		sum := sha256.Sum256([]byte(root))
		dir = filepath.Join(c, "runner", "snapshots", hex.EncodeToString(sum[:8]))
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("store directory: %w", err)
	}
	if rel, err := filepath.Rel(root, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s: %w", dir, ErrStoreInWorkTree)
	}
	return dir, nil
}

// initStoreDir makes dir a bare git repository that git itself can read,
// with the user's objects as an alternate.
func initStoreDir(dir, userCommon string) error {
	for _, d := range []string{"objects/info", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("init store: %w", err)
		}
	}
	files := map[string]string{
		"HEAD":   "ref: refs/heads/main\n",
		"config": "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("init store: %w", err)
		}
	}
	alt := filepath.Join(dir, "objects", "info", "alternates")
	want := ""
	if userCommon != "" {
		want = filepath.Join(userCommon, "objects") + "\n"
	}
	if got, err := os.ReadFile(alt); err == nil && string(got) == want {
		return nil
	}
	if want == "" {
		if err := os.Remove(alt); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("init store: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(alt, []byte(want), 0o644); err != nil {
		return fmt.Errorf("init store: %w", err)
	}
	return nil
}

// Dir is the store's directory (absolute); its file "lock" is held
// (flock) from Open to Close, which is how a collector of old stores
// tells one in use.
func (s *Store) Dir() string { return s.storeDir }

// Close saves the stat cache and releases the lock. It is safe to call
// more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.objects.flush() // before the cache, which names the held objects
	if err == nil && s.cacheDirty && s.state != nil {
		err = s.saveCache()
	}
	err = errors.Join(err, s.objects.close())
	if s.watch != nil {
		err = errors.Join(err, s.watch.close())
	}
	return errors.Join(err, s.lock.Close())
}
