// Package copytree copies a directory tree for the runner's --isolate work
// tree and a batch's clones: files with their modes and times, symlinks
// as links, cancellable, and a file gone during the copy named as such.
//
// Imports: the standard library only.
package copytree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrVanished is the error of a copy that listed a file which was gone
// before it could be read: something changed the tree during the copy
// (a background `git gc` repacking .git, an editor, a build). The error
// names the file.
var ErrVanished = errors.New("vanished during the copy")

// copyChunk is how much of a file is copied between two looks at the
// context, so a huge file does not hold up a cancel.
const copyChunk = 8 << 20

// Options shape Copy.
type Options struct {
	// LinkDir is a slash path under src whose regular files are hard-linked
	// where the file system allows it ("" for none).
	LinkDir string
	// Skip holds src-relative slash paths (files or directories) left out.
	Skip map[string]bool
	// BeforeOpen, when set, is called with each regular file's
	// src-relative slash path between listing it and opening it (tests
	// make files vanish there).
	BeforeOpen func(rel string)
}

// Copy copies the directory src to dst (which must not exist):
// directories, regular files with their modes and modification times, and
// symlinks as links, never followed. Other file types (sockets, devices) are
// left out. Regular files under the LinkDir subdirectory of src are
// hard-linked where the file system allows it, for content never modified
// in place such as git objects and packs. It stops with ctx's error when
// ctx ends (looked at before each entry and every 8 MiB of a file); a file
// or directory deleted between being listed and being read is an error
// wrapping ErrVanished that names it.
func Copy(ctx context.Context, src, dst string, o Options) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(src, path)
		if rerr != nil {
			return rerr
		}
		if err != nil {
			return vanished(rel, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if o.Skip[filepath.ToSlash(rel)] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return copyEntry(ctx, path, filepath.Join(dst, rel), rel, d, o)
	})
}

// copyEntry copies one entry of the walk.
func copyEntry(ctx context.Context, path, target, rel string, d fs.DirEntry, o Options) error {
	info, err := d.Info()
	if err != nil {
		return vanished(rel, err)
	}
	switch {
	case d.IsDir():
		return os.MkdirAll(target, info.Mode().Perm()|0o700)
	case d.Type()&fs.ModeSymlink != 0:
		return vanished(rel, Symlink(path, target))
	case d.Type().IsRegular():
		if o.BeforeOpen != nil {
			o.BeforeOpen(filepath.ToSlash(rel))
		}
		if o.LinkDir != "" && strings.HasPrefix(filepath.ToSlash(rel), o.LinkDir+"/") && os.Link(path, target) == nil {
			return nil
		}
		return vanished(rel, copyFile(ctx, path, target, info))
	default:
		return nil
	}
}

// vanished turns a "no such file" error about rel into one wrapping
// ErrVanished that names it; other errors pass unchanged.
func vanished(rel string, err error) error {
	if err == nil || !errors.Is(err, fs.ErrNotExist) || rel == "." {
		return err
	}
	return fmt.Errorf("%s %w (listed, then gone before it was read): something changed the tree meanwhile, "+
		"such as a background git gc; run again once it is done: %w", filepath.ToSlash(rel), ErrVanished, err)
}

// Symlink makes dst a symlink with the same target as the link src.
func Symlink(src, dst string) error {
	link, err := os.Readlink(src)
	if err != nil {
		return err
	}
	return os.Symlink(link, dst)
}

// File copies the regular file src to dst (which must not exist),
// keeping its mode and modification time.
func File(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	return copyFile(context.Background(), src, dst, info)
}

// copyFile copies one regular file, keeping its mode and times, in
// chunks with a look at ctx between them (each chunk still goes through
// copy_file_range where the kernel has it).
func copyFile(ctx context.Context, src, dst string, info fs.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			out.Close()
			return err
		}
		n, err := io.CopyN(out, in, copyChunk)
		if errors.Is(err, io.EOF) || err == nil && n < copyChunk {
			break
		}
		if err != nil {
			out.Close()
			return err
		}
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
