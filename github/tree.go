package github

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// treeNode is a directory while a tree is rebuilt.
type treeNode struct {
	files map[string]object.TreeEntry
	dirs  map[string]*treeNode
}

func newTreeNode() *treeNode {
	return &treeNode{files: map[string]object.TreeEntry{}, dirs: map[string]*treeNode{}}
}

// patchTree writes the tree of base with the given paths replaced by their
// content in dir (removed when absent there) and returns its hash. Only the
// listed paths are read, so ignored and untracked files never slip in.
func patchTree(s storer.EncodedObjectStorer, base *object.Tree, dir string, paths []string) (plumbing.Hash, error) {
	root := newTreeNode()
	walker := object.NewTreeWalker(base, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read base tree: %w", err)
		}
		if entry.Mode != filemode.Dir {
			if err := root.put(name, entry); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	// Removals go first and puts after, so a path that turned from a file
	// into a directory (or back) is free whatever order paths list it in.
	puts := map[string]object.TreeEntry{}
	for _, p := range paths {
		if err := applyPath(s, root, dir, p, puts); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(puts)) {
		if err := root.put(rel, puts[rel]); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return root.write(s)
}

// cleanRepoPath validates a repository-relative slash path.
func cleanRepoPath(p string) (string, error) {
	c := path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "./"))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return "", fmt.Errorf("%w: path %q is outside the repository", ErrPush, p)
	}
	for _, part := range strings.Split(c, "/") {
		if strings.EqualFold(part, ".git") {
			return "", fmt.Errorf("%w: path %q is inside .git", ErrPush, p)
		}
	}
	return c, nil
}

// applyPath removes p from root when dir has no file there (absent, under
// what is now a file, or now a directory whose files are listed on their
// own), or writes its blob and records the entry in puts.
func applyPath(s storer.EncodedObjectStorer, root *treeNode, dir, p string, puts map[string]object.TreeEntry) error {
	rel, err := cleanRepoPath(p)
	if err != nil {
		return err
	}
	full := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR): // ENOTDIR: a parent is a file now
		root.remove(rel)
		return nil
	case err != nil:
		return fmt.Errorf("%w: %w", ErrPush, err)
	case fi.IsDir():
		root.removeFile(rel) // a file became a directory; its files are listed on their own
		return nil
	}
	entry, err := writeBlob(s, full, fi)
	if err != nil {
		return err
	}
	puts[rel] = entry
	return nil
}

func writeBlob(s storer.EncodedObjectStorer, full string, fi fs.FileInfo) (object.TreeEntry, error) {
	var data []byte
	var err error
	mode := filemode.Regular
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		var target string
		target, err = os.Readlink(full)
		data, mode = []byte(filepath.ToSlash(target)), filemode.Symlink
	case fi.Mode().IsRegular():
		data, err = os.ReadFile(full)
		if fi.Mode()&0o111 != 0 {
			mode = filemode.Executable
		}
	default:
		return object.TreeEntry{}, fmt.Errorf("%w: %s is not a file or symlink", ErrPush, full)
	}
	if err != nil {
		return object.TreeEntry{}, fmt.Errorf("%w: %w", ErrPush, err)
	}
	obj := s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err == nil {
		_, err = w.Write(data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return object.TreeEntry{}, fmt.Errorf("%w: blob %s: %w", ErrPush, full, err)
	}
	h, err := s.SetEncodedObject(obj)
	if err != nil {
		return object.TreeEntry{}, fmt.Errorf("%w: store blob: %w", ErrPush, err)
	}
	return object.TreeEntry{Name: path.Base(filepath.ToSlash(full)), Mode: mode, Hash: h}, nil
}

// dirFor returns the node of p's directory, creating it when create is set.
func (n *treeNode) dirFor(p string, create bool) (*treeNode, string, error) {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		next, ok := n.dirs[d]
		if !ok {
			if !create {
				return nil, "", nil
			}
			if _, isFile := n.files[d]; isFile {
				return nil, "", fmt.Errorf("%w: %s: %s is a file", ErrPush, p, d)
			}
			next = newTreeNode()
			n.dirs[d] = next
		}
		n = next
	}
	return n, parts[len(parts)-1], nil
}

func (n *treeNode) put(p string, e object.TreeEntry) error {
	d, name, err := n.dirFor(p, true)
	if err != nil {
		return err
	}
	if sub, isDir := d.dirs[name]; isDir {
		if !sub.empty() {
			return fmt.Errorf("%w: %s is a directory in the tree", ErrPush, p)
		}
		delete(d.dirs, name) // its files were all removed: a file takes its place
	}
	e.Name = name
	d.files[name] = e
	return nil
}

func (n *treeNode) removeFile(p string) {
	if d, name, _ := n.dirFor(p, false); d != nil {
		delete(d.files, name)
	}
}

// remove deletes a file or a whole directory at p.
func (n *treeNode) remove(p string) {
	if d, name, _ := n.dirFor(p, false); d != nil {
		delete(d.files, name)
		delete(d.dirs, name)
	}
}

// write stores the node's tree (empty subdirectories dropped) and returns
// its hash.
func (n *treeNode) write(s storer.EncodedObjectStorer) (plumbing.Hash, error) {
	entries := make([]object.TreeEntry, 0, len(n.files)+len(n.dirs))
	for _, e := range n.files {
		entries = append(entries, e)
	}
	for name, d := range n.dirs {
		if d.empty() {
			continue
		}
		h, err := d.write(s)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	obj := s.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: encode tree: %w", ErrPush, err)
	}
	h, err := s.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: store tree: %w", ErrPush, err)
	}
	return h, nil
}

func (n *treeNode) empty() bool {
	if len(n.files) > 0 {
		return false
	}
	for _, d := range n.dirs {
		if !d.empty() {
			return false
		}
	}
	return true
}
