package gate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
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
			if data, err := e.ReadFile(-1); err == nil {
				h.Write(data)
			}
		}
		return nil
	})
	if !found {
		return ""
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
