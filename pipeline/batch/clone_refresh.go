package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// refresh fetches the entry's ref (the remote's HEAD when ref is "") from
// src into the cached clone at path and returns the commit it names now;
// prev is the commit the entry held, which a failure names and does not
// use: a batch runs on the repository's current commit or not at all (the
// caller records an infrastructure failure, retried like a failed clone).
// The entry's exclusive lock must be held.
func (c *cloner) refresh(ctx context.Context, path, src, ref, prev string) (string, error) {
	commit, err := c.fetch(ctx, path, src, ref)
	if err != nil {
		at := ""
		if ref != "" {
			at = fmt.Sprintf(" at %q", ref)
		}
		return "", fmt.Errorf("refresh the cached clone of %s%s: %w (the cache holds %s from an earlier batch, not used: "+
			"a batch runs on the repository's current commit; make the remote reachable and re-run, which resumes)",
			src, at, err, shortHash(prev))
	}
	if commit != prev {
		tmp := filepath.Join(path, commitFile+".new")
		if err := os.WriteFile(tmp, []byte(commit+"\n"), 0o644); err != nil {
			return "", fmt.Errorf("record base commit: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(path, commitFile)); err != nil {
			return "", fmt.Errorf("record base commit: %w", err)
		}
	}
	return commit, nil
}

// fetch updates the cached clone at path from src the way clone made it:
// the remote's HEAD, a branch or a tag, shallow to c.depth; a full commit
// hash already in the clone is used as it is (it cannot have moved), else
// the branches are fetched in full to find it.
func (c *cloner) fetch(ctx context.Context, path, src, ref string) (string, error) {
	r, err := git.PlainOpen(path)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	switch {
	case hexCommit.MatchString(ref):
		if _, err := r.CommitObject(plumbing.NewHash(ref)); err == nil {
			return ref, nil
		}
		if err := c.fetchSpec(ctx, r, src, 0, "+refs/heads/*:refs/remotes/origin/*"); err != nil {
			return "", err
		}
		return resolveCommit(r, ref)
	case ref == "":
		const local = "refs/remotes/origin/HEAD"
		if err := c.fetchSpec(ctx, r, src, c.depth, "+HEAD:"+local); err != nil {
			return "", err
		}
		return refCommit(r, local)
	}
	var errs []error
	for _, name := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)} {
		local := name
		if name.IsBranch() {
			local = plumbing.NewRemoteReferenceName("origin", ref)
		}
		err := c.fetchSpec(ctx, r, src, c.depth, fmt.Sprintf("+%s:%s", name, local))
		if err == nil {
			return refCommit(r, local)
		}
		errs = append(errs, err)
		if !errors.As(err, &git.NoMatchingRefSpecError{}) {
			break // not a missing ref: the tag would fail the same way
		}
	}
	return "", fmt.Errorf("ref %q: %w", ref, errors.Join(errs...))
}

// fetchSpec fetches one refspec from src into r with the cloner's
// credentials; being up to date already is no error.
func (c *cloner) fetchSpec(ctx context.Context, r *git.Repository, src string, depth int, spec string) error {
	src, auth := c.source(src)
	err := r.FetchContext(ctx, &git.FetchOptions{
		RemoteName: git.DefaultRemoteName, RemoteURL: src, RefSpecs: []config.RefSpec{config.RefSpec(spec)},
		Depth: depth, Tags: git.NoTags, Force: true, Auth: auth,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

// refCommit returns the commit the reference name points to, an
// annotated tag peeled.
func refCommit(r *git.Repository, name plumbing.ReferenceName) (string, error) {
	ref, err := r.Reference(name, true)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", name, err)
	}
	return peel(r, ref.Hash())
}

// lockEntry locks the cache entry at path through its lock file beside it
// (path + ".lock"): exclusive to clone or refresh it, shared to copy it.
// flock locks are per open file, so this orders goroutines of one process
// as well as processes sharing the cache (shards, other batches); the
// kernel drops the lock of a killed process. It waits until the lock is
// free or ctx is done, and returns the unlock function.
func lockEntry(ctx context.Context, path string, exclusive bool) (func(), error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock cache entry: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock cache entry %s: %w", filepath.Base(path), err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("wait for cache entry %s: %w", filepath.Base(path), context.Cause(ctx))
		case <-time.After(20 * time.Millisecond):
		}
	}
}
