package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// prepareWorkspace resolves the work tree, --repo, and checks it is one;
// with --isolate the copy is made later (isolateCopy), once the out dir
// exists. The original is only read.
func (r *execRun) prepareWorkspace(_ context.Context) error {
	repo := cmp.Or(r.opts.Repo, ".")
	abs, err := filepath.Abs(repo)
	if err != nil {
		return fmt.Errorf("%w: --repo %s: %w", ErrUsage, repo, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: --repo %s is not a directory", ErrUsage, repo)
	}
	if isBareRepo(abs) {
		return fmt.Errorf("%w: --repo %s is a bare git repository (HEAD, objects/ and refs/ with no work tree): "+
			"the agent would write into its git dir; give a checkout (git clone %s DIR, or git worktree add DIR)", ErrUsage, repo, repo)
	}
	r.repo, r.workTree = abs, abs
	return nil
}

// isBareRepo reports a directory laid out as a bare git repository: a HEAD
// file and objects/ and refs/ directories at its root, and no .git.
func isBareRepo(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return false
	}
	head, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || head.IsDir() {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
