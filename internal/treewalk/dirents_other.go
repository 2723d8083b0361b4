//go:build !linux

package treewalk

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// readDirents lists the directory open as fd, sorted by name, without "."
// and ".." (off Linux through os.File.ReadDir on a duplicate of fd; Linux
// reads getdents records directly).
func readDirents(fd int) ([]dirent, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, fmt.Errorf("dup: %w", err)
	}
	f := os.NewFile(uintptr(dup), "dir")
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("readdir: %w", err)
	}
	out := make([]dirent, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirent{name: e.Name(), typ: e.Type()})
	}
	slices.SortFunc(out, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}
