package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cover is one path the sandbox hides: with namespaces an empty read-only
// file or directory is bound over it; with Landlock only, no read right
// reaches it.
type cover struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir,omitempty"`
}

// within reports whether p is root or below it (both clean, absolute).
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// computeCovers turns hidden paths into covers that keep every keep path
// reachable: a hidden directory holding a keep path is replaced by its
// other children (recursively). Missing hidden paths are skipped; a hidden
// path below a keep path is covered as is (a .env in the work tree); one
// equal to a keep path is not hidden.
func computeCovers(hidden, keep []string) []cover {
	var out []cover
	seen := map[string]bool{}
	var add func(h string)
	add = func(h string) {
		if seen[h] {
			return
		}
		seen[h] = true
		fi, err := os.Stat(h)
		if err != nil {
			return
		}
		holds := false
		for _, k := range keep {
			if k == h {
				return // a keep path is never hidden
			}
			if within(k, h) {
				holds = true
			}
		}
		if !holds || !fi.IsDir() {
			out = append(out, cover{Path: h, Dir: fi.IsDir()})
			return
		}
		entries, err := os.ReadDir(h)
		if err != nil {
			return // cannot list it: leave it visible rather than hide the keep path below
		}
		for _, e := range entries {
			add(filepath.Join(h, e.Name()))
		}
	}
	for _, h := range hidden {
		add(filepath.Clean(h))
	}
	slices.SortFunc(out, func(a, b cover) int { return strings.Compare(a.Path, b.Path) })
	// A cover below a covered directory is gone with it (the empty
	// directory has no such entry to bind over).
	return slices.DeleteFunc(out, func(c cover) bool {
		return slices.ContainsFunc(out, func(d cover) bool { return d.Dir && d.Path != c.Path && within(c.Path, d.Path) })
	})
}

// readGrants are the Landlock read rules that reach everything but the
// covers: whole hierarchies where no cover is below, and along the way to
// a cover, the directory's listing only and each other child on its own.
type readGrants struct {
	Dirs   []string `json:"dirs,omitempty"`   // read, list and execute beneath
	Files  []string `json:"files,omitempty"`  // read and execute this file
	Listed []string `json:"listed,omitempty"` // list only (holds a cover)
}

// computeReadGrants walks from / to each cover.
func computeReadGrants(covers []cover) readGrants {
	var g readGrants
	var grant func(p string, isDir bool)
	grant = func(p string, isDir bool) {
		holds := false
		for _, c := range covers {
			if c.Path == p {
				return
			}
			if within(c.Path, p) {
				holds = true
			}
		}
		switch {
		case !isDir:
			g.Files = append(g.Files, p)
		case !holds:
			g.Dirs = append(g.Dirs, p)
		default:
			g.Listed = append(g.Listed, p)
			entries, err := os.ReadDir(p)
			if err != nil {
				return
			}
			for _, e := range entries {
				child := filepath.Join(p, e.Name())
				fi, err := os.Stat(child)
				if err != nil {
					continue // a dangling link: nothing to read
				}
				grant(child, fi.IsDir())
			}
		}
	}
	grant("/", true)
	return g
}
