package copytree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCopy: files, modes, times and symlinks are copied; a cancelled
// context stops the copy.
func TestCopy(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"a.txt": "a", ".git/HEAD": "ref: refs/heads/main\n", "sub/deep/b.sh": "#!/bin/sh\n"}
	for p, content := range files {
		mustWrite(t, filepath.Join(src, p), content)
	}
	if err := os.Chmod(filepath.Join(src, "sub/deep/b.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(src, "a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := Copy(t.Context(), src, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		if got, err := os.ReadFile(filepath.Join(dst, p)); err != nil || string(got) != content {
			t.Errorf("%s: %q, %v; want %q", p, got, err, content)
		}
	}
	if fi, err := os.Stat(filepath.Join(dst, "sub/deep/b.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode not kept: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "a.txt")); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("mtime not kept: %v", err)
	}
	if link, err := os.Readlink(filepath.Join(dst, "link")); err != nil || link != "a.txt" {
		t.Errorf("symlink: %q, %v", link, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Copy(ctx, src, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled copy: %v", err)
	}
}

// TestCopyVanishedAndCancelled: a file deleted between its
// directory's listing and its opening (a background git gc) stops the copy
// with ErrVanished naming it; a context cancelled mid-copy stops it with
// the context's error before the next file.
func TestCopyVanishedAndCancelled(t *testing.T) {
	src := t.TempDir()
	for i := range 20 {
		mustWrite(t, filepath.Join(src, ".git", "objects", fmt.Sprintf("%02d", i)), "x")
	}
	err := Copy(t.Context(), src, filepath.Join(t.TempDir(), "c"), Options{BeforeOpen: func(rel string) {
		if rel == ".git/objects/07" {
			_ = os.Remove(filepath.Join(src, filepath.FromSlash(rel)))
		}
	}})
	if !errors.Is(err, ErrVanished) || !strings.Contains(err.Error(), ".git/objects/07 vanished during the copy") ||
		!strings.Contains(err.Error(), "git gc") {
		t.Errorf("vanished file: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	opened := 0
	err = Copy(ctx, src, filepath.Join(t.TempDir(), "c"), Options{BeforeOpen: func(string) {
		if opened++; opened == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || opened != 3 {
		t.Errorf("cancelled copy: %v after %d files", err, opened)
	}
}

// mustWrite writes content to path, making its directories.
func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
