package pipeline

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// prepareWorkspace resolves the work tree: --repo itself, or with
// --isolate a fresh copy of it (.git included, so the user's index seeds
// the base snapshot) in a temporary directory that is removed at the end.
// The original is only read.
func (r *execRun) prepareWorkspace(ctx context.Context) error {
	repo := firstNonEmpty(r.opts.Repo, ".")
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
	if err := copyTree(ctx, abs, dst); err != nil {
		return fmt.Errorf("%w: --isolate: copy %s: %w", ErrInfra, repo, err)
	}
	r.workTree = dst
	return nil
}

// copyTree copies the directory src to dst (which must not exist):
// directories, regular files with their modes and modification times, and
// symlinks as links. Other file types (sockets, devices) are left out.
func copyTree(ctx context.Context, src, dst string) error {
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
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(path, target, info)
		default:
			return nil
		}
	})
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
