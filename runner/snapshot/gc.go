package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// The snapshot stores of work trees in the user's cache
// (<cache>/runner/snapshots/<hash of the work tree path>, one per work
// tree) are collected by this policy, at most once a day, when a run
// starts: a store not used for the policy's MaxAge is removed, and while all of
// them together take more than its MaxBytes the least recently used go
// first. A store is used when a run opens it (its lock file's time); the
// one a live run holds (locked) is never removed, this run's included.
const (
	storeGCEvery = 24 * time.Hour
	// storeGCStamp, in the snapshots directory, holds the time of the
	// last collection.
	storeGCStamp = ".gc-stamp"
)

// StorePolicy is when stores are removed: unused for MaxAge, or the
// least recently used while all take more than MaxBytes.
type StorePolicy struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// DefaultStorePolicy is 30 days, 5 GiB.
func DefaultStorePolicy() StorePolicy {
	return StorePolicy{MaxAge: 30 * 24 * time.Hour, MaxBytes: 5 << 30}
}

// storeUse is one store and when it was last used.
type storeUse struct {
	dir   string
	used  time.Time
	bytes int64
}

// CollectStores applies the policy to the stores in root (the snapshots
// directory) at now, and returns the stores removed. It does nothing
// when the last collection is less than storeGCEvery old.
func CollectStores(ctx context.Context, root string, now time.Time, pol StorePolicy) ([]string, error) {
	stamp := filepath.Join(root, storeGCStamp)
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < storeGCEvery {
		return nil, nil
	}
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		return nil, err
	}
	_ = os.Chtimes(stamp, now, now)
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var stores []storeUse
	var total int64
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := filepath.Join(root, e.Name())
		lock, err := os.Stat(filepath.Join(dir, "lock"))
		if !e.IsDir() || err != nil {
			continue // not a store
		}
		u := storeUse{dir: dir, used: lock.ModTime(), bytes: dirBytes(dir)}
		stores = append(stores, u)
		total += u.bytes
	}
	slices.SortFunc(stores, func(a, b storeUse) int { return a.used.Compare(b.used) }) // oldest first
	var removed []string
	var errs []error
	for _, s := range stores {
		if now.Sub(s.used) < pol.MaxAge && total <= pol.MaxBytes {
			break
		}
		ok, err := removeUnlocked(s.dir)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, s.dir)
			total -= s.bytes
		}
	}
	return removed, errors.Join(errs...)
}

// removeUnlocked removes the store dir unless a run holds its lock; it
// holds the lock itself while removing.
func removeUnlocked(dir string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil // in use
		}
		return false, err
	}
	return true, os.RemoveAll(dir)
}

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
