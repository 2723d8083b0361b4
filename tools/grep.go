package tools

import (
	"bufio"
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

	"github.com/bmatcuk/doublestar/v4"

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

// grepState collects matches across files.
type grepState struct {
	root    *os.Root // the work tree: no symlink leads out of it
	re      *regexp.Regexp
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
	root, err := os.OpenRoot(t.paths.Root())
	if err != nil {
		return Result{}, fmt.Errorf("grep: open work tree: %w", err)
	}
	defer root.Close()
	st := &grepState{re: re, root: root}
	if target, err := t.resolve(ctx, dirOrRoot(p.Path)); err == nil && target.Inside {
		if fi, err := t.statTarget(target); err == nil && fi.Mode().IsRegular() {
			if err := st.file(target.Rel); err != nil {
				return errorResult("grep: %v", err), nil
			}
			return st.result(), nil
		}
	}
	start, res, ok := t.startDir(ctx, "grep", p.Path)
	if !ok {
		return res, nil
	}
	err = walkTree(ctx, t.paths.Root(), start, func(e walkEntry) error {
		if e.Dir || !e.Entry.Type().IsRegular() || !includes(p.Include, start, e.Rel) {
			return nil
		}
		if err := st.file(e.Rel); err != nil {
			return nil // unreadable file: skip
		}
		if st.matches > maxGrepMatches {
			return errStopWalk
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("grep: %w", err)
	}
	return st.result(), nil
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
	ok, _ := doublestar.Match(include, subject)
	return ok
}

// file searches one regular file, skipping binary and very large ones. It
// was a regular file when found: a symlink put in its place since is not
// followed.
func (st *grepState) file(rel string) error {
	f, err := st.root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxGrepFileBytes {
		return nil
	}
	if bin, err := isBinary(f); err != nil || bin {
		return nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), maxGrepFileBytes)
	n, hit := 0, false
	for sc.Scan() {
		n++
		text := sc.Text()
		if !st.re.MatchString(text) {
			continue
		}
		hit = true
		st.matches++
		if st.matches > maxGrepMatches {
			break
		}
		if r := []rune(text); len(r) > maxGrepLineChars {
			text = string(r[:maxGrepLineChars]) + "…"
		}
		st.lines = append(st.lines, fmt.Sprintf("%s:%d: %s", rel, n, text))
	}
	if hit {
		st.files++
	}
	return nil
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
