package report

import (
	"fmt"
	"strings"
)

// maxIgnoredNamed is how many ignored paths written the note names; the
// rest are counted (run.finished and the patch event list the first
// event.MaxIgnoredListed).
const maxIgnoredNamed = 20

// ignoredNote says, above the final message and never cut, which paths
// git ignores (files, and directories ending in "/") were created or
// changed during the run: they are not
// in the patch (the Changes can say "0 files") yet stay in the work tree,
// where the next `npm test` outside the sandbox runs a payload left in
// node_modules/.bin. The first maxIgnoredNamed are named.
func (r Report) ignoredNote() string {
	w := r.IgnoredWritten
	switch {
	case w == nil:
		return ""
	case w.Error != "":
		return fmt.Sprintf("**Ignored paths**: the work tree could not be searched for files written in paths git ignores (%s).\n\n",
			noMentions(cell(shorten(w.Error, 300))))
	case w.Total == 0:
		return ""
	}
	var names []string
	for i, p := range w.Paths {
		if i == maxIgnoredNamed {
			break
		}
		names = append(names, code(shorten(p, 200)))
	}
	if more := w.Total - len(names); more > 0 {
		names = append(names, fmt.Sprintf("and %d more", more))
	}
	what, verb := countText(w.Total, "path", "paths")+" that git ignores", "was"
	if w.Total > 1 {
		verb = "were"
	}
	where := "they stay in the work tree, so check them before anything runs them (run untrusted tasks with `--isolate`)"
	if w.Isolated {
		where = "they went with the `--isolate` copy of the work tree"
	}
	return fmt.Sprintf("**Ignored paths written**: %s %s created or changed during the run; no patch holds them and %s: %s.\n\n",
		what, verb, where, noMentions(strings.Join(names, ", ")))
}

// countText is "1 file" or "3 files".
func countText(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%s %s", thousands(int64(n)), many)
}
