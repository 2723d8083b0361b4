package gate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// submodulePaths lists the "path = …" entries of the work tree's
// .gitmodules (not read through a symlink).
func submodulePaths(root *safefs.Root) []string {
	data, err := root.ReadFile(".gitmodules", tripwireMaxFile)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.TrimSpace(k) == "path" {
			if p := filepath.ToSlash(filepath.Clean(strings.TrimSpace(v))); p != "." && filepath.IsLocal(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// digestMaxFile bounds the files whose content treeDigest reads (64
// MiB); a bigger one counts by its size, modification time and inode.
const digestMaxFile = 64 << 20

// hashContent writes a regular file's content to h, streamed, or its
// stamp when it is over digestMaxFile: a command's sparse terabyte file
// is neither held (read whole, it crashed the runner) nor read for hours.
func hashContent(h io.Writer, e *safefs.Entry) {
	if e.Size > digestMaxFile {
		fmt.Fprintf(h, "%d\x00%d\x00%d\x00", e.Size, e.ModTime, e.Ino)
		return
	}
	if f, err := e.Open(); err == nil {
		_, _ = io.Copy(h, io.LimitReader(f, digestMaxFile+1))
		_ = f.Close()
	}
}

// treeDigest hashes the names, modes and contents of the files below the
// root-relative directory sub (its .git excluded), following no
// symlink; "" when sub is missing or behind a symlink.
func treeDigest(root *safefs.Root, sub string) string {
	h := sha256.New()
	found := false
	_ = root.Walk(sub, func(e *safefs.Entry) error {
		found = true
		if e.Name == ".git" && e.Rel != sub {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(e.Rel, sub), "/")
		fmt.Fprintf(h, "%s\x00%v\x00", rel, e.Mode.Type())
		if e.Mode.IsRegular() {
			hashContent(h, e)
		}
		return nil
	})
	if !found {
		return ""
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
