package batchreport

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestHTMLSize: the page of 1,000 repositories stays under 2 MB and holds
// no reference to anything outside itself but its relative links and the
// repositories' pull requests.
func TestHTMLSize(t *testing.T) {
	dir := t.TempDir()
	dirs := genBatch{Name: "nightly", Repos: 1000, Seed: 3, Reruns: true}.write(t, filepath.Join(dir, "out"))
	rep, err := Load(t.Context(), dirs, Options{LinkBase: dir})
	if err != nil {
		t.Fatal(err)
	}
	html, err := HTML(rep)
	if err != nil {
		t.Fatal(err)
	}
	const limit = 2 << 20
	t.Logf("1,000 repositories: %d bytes", len(html))
	if len(html) >= limit {
		t.Errorf("the page of 1,000 repositories is %d bytes, over %d", len(html), limit)
	}
	for _, bad := range []string{"<link", "<img", "@import", "src=", "url("} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("the page has %q: it could fetch something", bad)
		}
	}
	if n := bytes.Count(html, []byte("http://")) + bytes.Count(html, []byte("https://")); n != bytes.Count(html, []byte(`xmlns="http://www.w3.org/2000/svg"`))+2*countPRs(rep) {
		t.Errorf("%d absolute URLs in the page; want only the SVG namespace and the pull requests (%d)", n, countPRs(rep))
	}
}

func countPRs(rep *Report) int {
	n := 0
	for _, r := range rep.Repos {
		if r.PRURL != "" {
			n++
		}
	}
	return n
}
