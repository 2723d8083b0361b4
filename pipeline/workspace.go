package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// prepareWorkspace resolves the work tree: --repo itself, or with
// --isolate a fresh copy of it (.git included, so the user's index seeds
// the base snapshot) in a temporary directory that is removed at the end.
// The original is only read.
func (r *execRun) prepareWorkspace(ctx context.Context) error {
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
	if !r.opts.Isolate {
		return nil
	}
	tmp, err := os.MkdirTemp("", "runner-isolate-*")
	if err != nil {
		return fmt.Errorf("%w: --isolate: %w", ErrInfra, err)
	}
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	r.tempDir = tmp
	dst := filepath.Join(tmp, filepath.Base(abs))
	if err := CopyTree(ctx, abs, dst, ""); err != nil {
		return fmt.Errorf("%w: --isolate: copy %s: %w", ErrInfra, repo, err)
	}
	r.workTree = dst
	return nil
}

// CopyTree copies the directory src to dst (which must not exist):
// directories, regular files with their modes and modification times, and
// symlinks as links, never followed. Other file types (sockets, devices) are
// left out. Regular files under the linkDir subdirectory of src (a slash
// path; "" for none) are hard-linked where the file system allows it, for
// content never modified in place such as git objects and packs. It stops
// with ctx's error when ctx ends.
func CopyTree(ctx context.Context, src, dst, linkDir string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			return CopySymlink(path, target)
		case d.Type().IsRegular():
			if linkDir != "" && strings.HasPrefix(filepath.ToSlash(rel), linkDir+"/") && os.Link(path, target) == nil {
				return nil
			}
			return copyFile(path, target, info)
		default:
			return nil
		}
	})
}

// CopySymlink makes dst a symlink with the same target as the link src.
func CopySymlink(src, dst string) error {
	link, err := os.Readlink(src)
	if err != nil {
		return err
	}
	return os.Symlink(link, dst)
}

// CopyFile copies the regular file src to dst (which must not exist),
// keeping its mode and modification time.
func CopyFile(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	return copyFile(src, dst, info)
}

// copyFile copies one regular file, keeping its mode and times.
func copyFile(src, dst string, info fs.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if info.Mode().Perm()&0o200 == 0 {
		if err := os.Chmod(dst, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return os.Chtimes(dst, info.ModTime(), info.ModTime())
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
