package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/seed43ef5acb/runner/internal/treewalk"
	"github.com/seed43ef5acb/runner/tools/permission"
)

//go:embed grep.md
var grepDescription string

// Grep limits.
const (
	maxGrepMatches   = 200
	maxGrepLineChars = 500
	maxGrepFileBytes = 10 << 20 // larger files are skipped
)

// GrepParams are the arguments of the grep tool.
type GrepParams struct {
	Pattern string `json:"pattern" description:"The regular expression to search for (RE2 syntax)."`
	Path    string `json:"path,omitempty" description:"The directory or file to search, relative to the work tree. Default: the work tree."`
	Include string `json:"include,omitempty" description:"Only search files matching this glob, e.g. *.go or *.{ts,tsx}."`
}

type grepTool struct{ base }

func (t *grepTool) Info() Info {
	return Info{Name: "grep", Description: grepDescription, Parameters: schemaFor(GrepParams{})}
}

// Permissions: a read of the directory or file searched.
func (t *grepTool) Permissions(input json.RawMessage) ([]Request, error) {
	p, err := decodeParams[GrepParams](input)
	if err != nil {
		return nil, err
	}
	return []Request{{Permission: permission.Read, Target: dirOrRoot(p.Path)}}, nil
}

// grepState collects matches across files, in walk order.
type grepState struct {
	base
	search  *searcher
	lines   []string
	matches int
	files   int
}

func (t *grepTool) Run(ctx context.Context, call Call) (Result, error) {
	p, err := decodeParams[GrepParams](call.Input)
	if err != nil {
		return badArguments("grep", err), nil
	}
	re, err := regexp.Compile(p.Pattern)
	if err != nil {
		return errorResult("grep: invalid regular expression: %v. The syntax is RE2 (Go): escape special characters, and note there are no backreferences or lookaround.", err), nil
	}
	if p.Include != "" && !doublestar.ValidatePattern(p.Include) {
		return errorResult("grep: invalid include glob %q.", p.Include), nil
	}
	st := &grepState{base: t.base, search: newSearcher(re)}
	if target, err := t.resolve(ctx, dirOrRoot(p.Path)); err == nil && target.Inside {
		if fi, err := t.statTarget(target); err == nil && fi.Mode().IsRegular() {
			if err := t.grepOne(st, target.Rel); err != nil {
				return errorResult("grep: %v", err), nil
			}
			return st.result(), nil
		}
	}
	start, res, ok := t.startDir(ctx, "grep", p.Path)
	if !ok {
		return res, nil
	}
	spec := walkSpec{
		keep: func(e *walkEntry) bool { return e.Type == 0 && includes(p.Include, start, e.Rel) },
		work: func(dirfd int, e *walkEntry) any { return st.searchAt(dirfd, e.Name, e.Rel) },
	}
	err = walkTreeSpec(ctx, t.paths.Root(), start, spec, func(e *walkEntry) error {
		if m, ok := e.Result.([]string); ok && st.add(m) {
			return errStopWalk
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("grep: %w", err)
	}
	return st.result(), nil
}

// grepOne searches the single regular file rel. It was a regular file when
// checked: a symlink put in its place since is not followed, and os.Root
// keeps the open inside the work tree.
func (t *grepTool) grepOne(st *grepState, rel string) error {
	root, err := os.OpenRoot(t.paths.Root())
	if err != nil {
		return fmt.Errorf("open work tree: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
	var lines []string
	if err := sc.Read(func(fd uintptr) bool { lines = st.searchFd(int(fd), rel); return true }); err != nil {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	st.add(lines)
	return nil
}

// searchAt searches the file name in the directory dirfd (rel is its path
// for the output) and returns its formatted matching lines; an unreadable,
// binary or too large file has none. It runs in walk workers.
func (st *grepState) searchAt(dirfd int, name, rel string) any {
	fd, err := treewalk.OpenIn(dirfd, name, false)
	if err != nil {
		return nil
	}
	defer treewalk.CloseFd(fd)
	return st.searchFd(fd, rel)
}

func (st *grepState) searchFd(fd int, rel string) []string {
	if st.protectedFd(fd) { // a protected file under another name: never searched
		return nil
	}
	bp, err := readForGrep(fd, maxGrepFileBytes)
	if err != nil {
		return nil
	}
	defer putBuf(bp)
	found := st.search.search(*bp, maxGrepMatches+1)
	if len(found) == 0 {
		return nil
	}
	out := make([]string, len(found))
	for i, l := range found {
		text := string(l.text)
		if utf8.RuneCountInString(text) > maxGrepLineChars {
			text = string([]rune(text)[:maxGrepLineChars]) + "…"
		}
		out[i] = fmt.Sprintf("%s:%d: %s", rel, l.n, text)
	}
	return out
}

// add takes one file's matching lines, in walk order; it reports whether
// the match limit was passed (the walk can stop).
func (st *grepState) add(lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	st.files++
	for _, l := range lines {
		st.matches++
		if st.matches > maxGrepMatches {
			return true
		}
		st.lines = append(st.lines, l)
	}
	return false
}

// includes applies the include glob: to the base name, or to the path
// relative to the start directory when the glob has a '/'.
func includes(include, start, rel string) bool {
	if include == "" {
		return true
	}
	subject := path.Base(rel)
	if strings.Contains(include, "/") {
		subject = relTo(start, rel)
	}
	return permission.MatchGlob(include, subject)
}

func (st *grepState) result() Result {
	res := Result{Metadata: map[string]any{"matches": min(st.matches, maxGrepMatches), "files": st.files}}
	if len(st.lines) == 0 {
		res.Output = "No matches found."
		return res
	}
	res.Output = strings.Join(st.lines, "\n")
	if st.matches > maxGrepMatches {
		res.Truncated = true
		res.Output += fmt.Sprintf("\n(more than %d matches; showing the first %d. Use a more specific pattern, path or include.)", maxGrepMatches, maxGrepMatches)
	}
	return res
}
