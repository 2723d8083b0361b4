package snapshot

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/seed43ef5acb/runner/internal/gitignore"
)

// Keep copies trees (with their subtrees and the blobs that workTree's git
// repository does not hold) from s into the default store of workTree, so
// that a later run there can diff against them. An --isolate run's own
// store goes with its copy; Keep lets a run continued in the user's tree
// find the base tree. It takes no lock: objects are written loose, each
// through a rename, as git does; ones the store has are skipped.
func (s *Store) Keep(ctx context.Context, workTree string, trees ...Tree) error {
	other, err := defaultObjects(workTree)
	if err != nil {
		return fmt.Errorf("keep snapshots: %w", err)
	}
	other.noPack = true // loose: a run opening the store meanwhile removes unfinished packs
	k := keeper{src: s.objects, dst: other, seen: map[plumbing.Hash]bool{}}
	if err := k.trees(ctx, trees); err != nil {
		return errors.Join(fmt.Errorf("keep snapshots: %w", err), other.close())
	}
	return other.close()
}

// Take copies trees from the default store of workTree into s, as Keep
// copies the other way: an --isolate run continuing a run finds its base
// there. A tree that store lacks is an error.
func (s *Store) Take(ctx context.Context, workTree string, trees ...Tree) error {
	other, err := defaultObjects(workTree)
	if err != nil {
		return fmt.Errorf("take snapshots: %w", err)
	}
	k := keeper{src: other, dst: s.objects, seen: map[plumbing.Hash]bool{}}
	return errors.Join(k.trees(ctx, trees), other.close())
}

// defaultObjects opens the objects of workTree's default store (creating
// it), without its lock.
func defaultObjects(workTree string) (*objectStore, error) {
	root, err := filepath.Abs(workTree)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("work tree %q: %w", workTree, err)
	}
	dir, err := storeDirFor(root, "")
	if err != nil {
		return nil, err
	}
	repo, err := gitignore.FindRepo(root)
	if err != nil {
		return nil, err
	}
	common := ""
	if repo != nil {
		common = repo.CommonDir
	}
	if err := initStoreDir(dir, common); err != nil {
		return nil, err
	}
	return newObjectStore(dir, common), nil
}

// keeper copies objects from one store to another.
type keeper struct {
	src, dst *objectStore
	seen     map[plumbing.Hash]bool
}

// trees copies each tree.
func (k *keeper) trees(ctx context.Context, trees []Tree) error {
	for _, t := range trees {
		if err := k.tree(ctx, plumbing.NewHash(string(t))); err != nil {
			return err
		}
	}
	return nil
}

// tree copies tree h unless dst has it (then it has what it holds).
func (k *keeper) tree(ctx context.Context, h plumbing.Hash) error {
	if h.IsZero() || k.seen[h] || k.dst.has(h) {
		return nil
	}
	k.seen[h] = true
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := k.src.read(plumbing.TreeObject, h)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadTree, err)
	}
	entries, err := decodeTree(data)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch {
		case e.mode == modeDir:
			err = k.tree(ctx, e.hash)
		case e.mode != modeGitlink:
			err = k.blob(e.hash)
		}
		if err != nil {
			return err
		}
	}
	_, err = k.dst.writeBytes(plumbing.TreeObject, data)
	return err
}

// blob copies one blob unless dst or its user's repository has it.
func (k *keeper) blob(h plumbing.Hash) error {
	if _, unhashed := unhashedSize(h); unhashed { // a file too large to store: no object
		return nil
	}
	if k.seen[h] || k.dst.has(h) || k.inUser(h) {
		return nil
	}
	k.seen[h] = true
	size, err := k.src.size(plumbing.BlobObject, h)
	if err != nil {
		return err
	}
	if size > inMemoryLimit { // streamed, as Track stores a large file
		r, err := k.src.open(plumbing.BlobObject, h)
		if err != nil {
			return err
		}
		defer r.Close()
		return k.dst.writeLoose(h, func(w io.Writer) (plumbing.Hash, error) {
			d := sha1.New()
			mw := io.MultiWriter(w, d)
			if _, err := mw.Write(objectHeader(plumbing.BlobObject, size)); err != nil {
				return plumbing.ZeroHash, err
			}
			if _, err := io.Copy(mw, r); err != nil {
				return plumbing.ZeroHash, err
			}
			var got plumbing.Hash
			copy(got[:], d.Sum(nil))
			return got, nil
		})
	}
	data, err := k.src.read(plumbing.BlobObject, h)
	if err != nil {
		return err
	}
	_, err = k.dst.writeBytes(plumbing.BlobObject, data)
	return err
}

// inUser reports whether dst's user repository holds blob h.
func (k *keeper) inUser(h plumbing.Hash) bool {
	if k.dst.user == nil {
		return false
	}
	k.dst.readMu.Lock()
	defer k.dst.readMu.Unlock()
	_, err := k.dst.user.EncodedObject(plumbing.BlobObject, h)
	return err == nil
}
