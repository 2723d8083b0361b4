// Package doclink builds links to the runner's published docs and reads
// Markdown headings the way GitHub turns them into anchors.
//
// Imports: the standard library only.
package doclink

import (
	"regexp"
	"strings"
)

// Base is where docs/ is published: messages link below it.
const Base = "https://github.com/seed43ef5acb/runner/blob/main/docs/"

// URL is the published link to a docs/ page, and to its anchor unless
// anchor is "".
func URL(page, anchor string) string {
	if anchor == "" {
		return Base + page
	}
	return Base + page + "#" + anchor
}

var (
	heading  = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	slugDrop = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// Anchors returns the anchors GitHub gives a Markdown page's headings.
// Headings inside ``` fences are not headings.
func Anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(StripFences(doc), -1) {
		out[Slug(m[1])] = true
	}
	return out
}

// Slug is GitHub's anchor for a heading's text: lower case, punctuation
// dropped, spaces turned into hyphens.
func Slug(text string) string {
	s := strings.ToLower(strings.TrimSpace(text))
	s = slugDrop.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

// StripFences blanks the lines inside ``` fences, where # is a comment.
func StripFences(doc string) string {
	lines := strings.Split(doc, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
