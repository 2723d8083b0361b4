package gate

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// submodulePaths lists the "path = …" entries of the work tree's
// .gitmodules.
func submodulePaths(workTree string) []string {
	f, err := os.Open(filepath.Join(workTree, ".gitmodules"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.TrimSpace(k) == "path" {
			if p := filepath.ToSlash(filepath.Clean(strings.TrimSpace(v))); p != "." && !strings.HasPrefix(p, "../") {
				out = append(out, p)
			}
		}
	}
	return out
}

// treeDigest hashes the names, modes and contents of the files below dir
// (its .git excluded); "" when dir is missing.
func treeDigest(dir string) string {
	h := sha256.New()
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr
		}
		found = true
		if d.Name() == ".git" && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%v\x00", rel, d.Type())
		if d.Type().IsRegular() {
			if data, err := os.ReadFile(p); err == nil {
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
