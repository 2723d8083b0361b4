package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/doclink"
)

// docPages are the Markdown pages a user reads: the README, CONTRIBUTING,
// ARCHITECTURE and every page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"../../README.md", "../../CONTRIBUTING.md", "../../ARCHITECTURE.md"}
	more, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(pages, more...)
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link of the docs names a file that exists,
// and every #anchor a heading of its page.
func TestDocLinks(t *testing.T) {
	pages := docPages(t)
	docs, linked := map[string]bool{}, map[string]bool{}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(page, "../../docs/") {
			docs[filepath.Clean(page)] = true
			if n := strings.Count(string(data), "\n"); n > 1000 {
				t.Errorf("%s has %d lines; split it (at most 1,000)", page, n)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(doclink.StripFences(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := filepath.Clean(page)
			if path != "" {
				dest = filepath.Join(filepath.Dir(page), path)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links %s, which does not exist", page, target)
				continue
			}
			linked[filepath.Clean(dest)] = true
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			body, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !doclink.Anchors(string(body))[frag] {
				t.Errorf("%s links %s: no heading of %s has the anchor #%s", page, target, dest, frag)
			}
		}
	}
	for d := range docs {
		if !linked[d] {
			t.Errorf("%s is linked from no page: link it from README.md or another page", d)
		}
	}
}
