package github

import (
	"strings"
	"unicode/utf8"
)

// CommentLimit is GitHub's limit for comment and pull request bodies, in
// characters; counting runes also keeps a body under the 262,144-byte limit
// measured for comments.
const CommentLimit = 65536

// markerPrefix starts every hidden marker the runner writes; a comment
// carrying it never triggers a run.
const markerPrefix = "<!-- runner:"

const commentCutNotice = "\n\n---\n_This comment was cut to fit GitHub's size limit; the full report is in the run's step summary and events file._\n"

// Marker is the hidden HTML comment that starts the sticky comment of a
// task: <!-- runner:task=NAME -->. Characters that would end the HTML
// comment early are replaced.
func Marker(task string) string {
	r := strings.NewReplacer("--", "-", ">", "_", "\n", " ", "\r", " ")
	return markerPrefix + "task=" + r.Replace(task) + " -->"
}

// HasMarker reports whether body carries any runner marker.
func HasMarker(body string) bool { return strings.Contains(body, markerPrefix) }

// InertMarkers makes every runner marker in text that is not the runner's
// own (the model's final message, a prompt, a file name) visible and inert:
// "<!-- runner:" becomes "&lt;!-- runner:", which GitHub shows as written
// and no marker search matches. Without it a final message carrying
// <!-- runner:history workflow_run=N … --> after the runner's own marker
// would lead the next continue to another workflow run's artifact (any
// workflow run of the repository can upload one, a fork's included).
func InertMarkers(text string) string {
	return strings.ReplaceAll(text, markerPrefix, "&lt;!-- runner:")
}

// FitComment returns body when it has at most limit runes. Otherwise it cuts
// the details first: everything from the first "<details" (the collapsed
// patch and logs of a report) is shortened on a line boundary, an open code
// fence and <details> closed; only when the part before it (the marker and
// the summary) does not fit either is that part cut too. A notice says the
// body was cut. The start of the body, and so the marker, is always kept.
func FitComment(body string, limit int) string {
	if utf8.RuneCountInString(body) <= limit {
		return body
	}
	summary, details := body, ""
	if i := strings.Index(body, "<details"); i >= 0 {
		summary, details = body[:i], body[i:]
	}
	build := func(room int) string {
		if n := utf8.RuneCountInString(summary); n < room && details != "" {
			return summary + closeBlocks(cutRunes(details, room-n)) + commentCutNotice
		}
		return closeBlocks(cutRunes(body, room)) + commentCutNotice
	}
	room := limit - utf8.RuneCountInString(commentCutNotice)
	if out := build(room); utf8.RuneCountInString(out) <= limit {
		return out // the usual case: the closers fit in the slack
	}
	// Closers did not fit (many open blocks): the largest room that fits.
	best := cutRunes(body, limit)
	for lo, hi := 0, room; lo <= hi; {
		mid := (lo + hi) / 2
		if out := build(mid); utf8.RuneCountInString(out) <= limit {
			best, lo = out, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best
}

// cutRunes returns the start of s of at most n runes, on a line boundary
// when there is one.
func cutRunes(s string, n int) string {
	off := 0
	for i := 0; i < n && off < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return cutAtLine(s, off)
}

// closeBlocks closes an open code fence and unclosed <details> elements.
func closeBlocks(s string) string {
	if openFence(s) {
		s += "\n```"
	}
	if n := strings.Count(s, "<details") - strings.Count(s, "</details>"); n > 0 {
		s += strings.Repeat("\n</details>", n)
	}
	return s
}
