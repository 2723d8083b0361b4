package github

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Hunk is one hunk of a file's unified diff, by its new side: lines
// NewStart … NewStart+NewLines-1 of the changed file (1-based), every one
// of them an added or a context line, so a review comment on side RIGHT
// may be put on any of them.
type Hunk struct {
	NewStart, NewLines int
}

// Contains reports whether the new-side lines from … to (inclusive) all
// lie in the hunk.
func (h Hunk) Contains(from, to int) bool {
	return from >= h.NewStart && to < h.NewStart+h.NewLines && from <= to
}

// FileDiff is one file of a pull request's diff: the path on the head
// side, and its hunks. NoPatch says GitHub gave no patch (a binary file,
// or a diff too large to show), so no line of it can take a comment.
type FileDiff struct {
	Path    string
	Status  string // added, modified, removed, renamed, …
	Hunks   []Hunk
	NoPatch bool
}

// Hunk returns the hunk that holds the new-side lines from … to, and
// whether there is one.
func (f FileDiff) Hunk(from, to int) (Hunk, bool) {
	for _, h := range f.Hunks {
		if h.Contains(from, to) {
			return h, true
		}
	}
	return Hunk{}, false
}

// hunkHeader is "@@ -a[,b] +c[,d] @@ optional section heading".
var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// ParseHunks reads the hunks of a unified diff of one file: the `patch`
// of the pull request files API (hunks only), or a whole `git diff` of one
// file (lines before the first hunk header are skipped). Each hunk's body
// is counted against its header (old side: context and '-' lines; new
// side: context and '+' lines; "\ No newline at end of file" counts for
// neither); a hunk whose body does not match its header, or a line that
// is none of these, is an error naming the hunk. A header without a count
// means one line ("@@ -3 +3 @@"); an empty line inside a hunk is taken as
// an empty context line (some tools strip the leading space).
func ParseHunks(patch string) ([]Hunk, error) {
	var out []Hunk
	lines := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		m := hunkHeader.FindStringSubmatch(lines[i])
		if m == nil {
			if len(out) == 0 {
				continue // file headers before the first hunk
			}
			return nil, fmt.Errorf("github: diff line %d: %q is neither a hunk header nor inside a hunk", i+1, cut(lines[i], 60))
		}
		oldLines, newLines := count(m[2]), count(m[4])
		newStart, _ := strconv.Atoi(m[3])
		header := i + 1
		oldSeen, newSeen := 0, 0
		for i+1 < len(lines) && (oldSeen < oldLines || newSeen < newLines || strings.HasPrefix(lines[i+1], `\`)) {
			i++
			switch l := lines[i]; {
			case l == "" || l[0] == ' ':
				oldSeen++
				newSeen++
			case l[0] == '-':
				oldSeen++
			case l[0] == '+':
				newSeen++
			case l[0] == '\\':
			default:
				return nil, fmt.Errorf("github: diff line %d (hunk of line %d): %q is not a context, '+' or '-' line", i+1, header, cut(l, 60))
			}
		}
		if oldSeen != oldLines || newSeen != newLines {
			return nil, fmt.Errorf("github: diff hunk of line %d: header says -%d +%d lines, body has -%d +%d", header, oldLines, newLines, oldSeen, newSeen)
		}
		out = append(out, Hunk{NewStart: newStart, NewLines: newLines})
	}
	return out, nil
}

// count is a hunk header's line count: "" (absent) is 1.
func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

// cut shortens s to n bytes for an error message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Files lists the pull request's files with their hunks
// (PullRequestFiles), retried on transient failures like Post.
func (rv *Reviewer) Files(ctx context.Context) (map[string]FileDiff, error) {
	return retryAPI(ctx, rv.BackOff, func() (map[string]FileDiff, error) {
		return PullRequestFiles(ctx, rv.Client, rv.Owner, rv.Repo, rv.Number)
	})
}

// maxPRFiles is how many files the pull request files API lists at most.
const maxPRFiles = 3000

// PullRequestFiles lists the files of pull request number (every page, at
// most the 3,000 GitHub lists) with their hunks, by head-side path. A file
// whose patch GitHub leaves out, or whose patch cannot be parsed, has
// NoPatch set: its lines take no comments.
func PullRequestFiles(ctx context.Context, client *gh.Client, owner, repo string, number int) (map[string]FileDiff, error) {
	out := map[string]FileDiff{}
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := client.PullRequests.ListFiles(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("github: list files of %s/%s#%d: %w", owner, repo, number, err)
		}
		for _, f := range page {
			fd := FileDiff{Path: f.GetFilename(), Status: f.GetStatus()}
			hunks, err := ParseHunks(f.GetPatch())
			switch {
			case f.Patch == nil || err != nil:
				fd.NoPatch = true
			default:
				fd.Hunks = hunks
			}
			out[fd.Path] = fd
		}
		if resp.NextPage == 0 || len(out) >= maxPRFiles {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
