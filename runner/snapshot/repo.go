package snapshot

import (
	"bufio"
	"os"
	"strings"
)

// attributesFilter reports whether an attributes file sets any content
// filter, so that index hashes cannot stand for the files on disk.
func attributesFilter(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, attr := range fields[1:] {
			if strings.HasPrefix(attr, "-") || strings.HasPrefix(attr, "!") {
				continue
			}
			name, _, _ := strings.Cut(attr, "=")
			if isFilterAttr(name) {
				return true
			}
		}
	}
	return false
}

// isFilterAttr reports whether a .gitattributes attribute makes the index
// hold content other than the bytes on disk.
func isFilterAttr(name string) bool {
	switch name {
	case "text", "eol", "filter", "crlf", "ident", "working-tree-encoding":
		return true
	}
	return false
}
