package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitecturePaths: every file or directory ARCHITECTURE.md names in
// backquotes (a path with a slash or a file extension) exists, so the map
// does not drift from the tree.
func TestArchitecturePaths(t *testing.T) {
	data, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	pathLike := regexp.MustCompile("`([A-Za-z0-9_./<>-]+)`")
	checked := 0
	for _, m := range pathLike.FindAllStringSubmatch(string(data), -1) {
		p := m[1]
		if strings.ContainsAny(p, "<>") || !(strings.Contains(p, "/") || filepath.Ext(p) != "") ||
			strings.HasPrefix(p, ".") && !strings.Contains(p, "/") {
			continue // a pattern, a name such as `run.started`
		}
		if filepath.Ext(p) == "" || strings.Contains(p, "/") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".json") {
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				if strings.Contains(p, "/") || strings.HasSuffix(p, ".md") {
					t.Errorf("ARCHITECTURE.md names %s, which does not exist", p)
				}
				continue
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("checked only %d paths", checked)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(ARCHITECTURE.md)") {
		t.Error("README.md does not link ARCHITECTURE.md")
	}
}
