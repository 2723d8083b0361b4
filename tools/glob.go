package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/seed43ef5acb/runner/tools/permission"
)

//go:embed glob.md
var globDescription string

// maxGlobResults bounds the paths glob shows.
const maxGlobResults = 100

// GlobParams are the arguments of the glob tool.
type GlobParams struct {
	Pattern string `json:"pattern" description:"The glob to match, e.g. **/*.go (relative to path)."`
	Path    string `json:"path,omitempty" description:"The directory to search, relative to the work tree. Default: the work tree."`
}

type globTool struct{ base }

func (t *globTool) Info() Info {
	return Info{Name: "glob", Description: globDescription, Parameters: schemaFor(GlobParams{})}
}

// Permissions: a read of the directory searched.
func (t *globTool) Permissions(input json.RawMessage) ([]Request, error) {
	p, err := decodeParams[GlobParams](input)
	if err != nil {
		return nil, err
	}
	return []Request{{Permission: permission.Read, Target: dirOrRoot(p.Path)}}, nil
}

func (t *globTool) Run(ctx context.Context, call Call) (Result, error) {
	p, err := decodeParams[GlobParams](call.Input)
	if err != nil {
		return badArguments("glob", err), nil
	}
	if !doublestar.ValidatePattern(p.Pattern) {
		return errorResult("glob: invalid pattern %q. Use *, **, ?, [abc] and {a,b}.", p.Pattern), nil
	}
	start, res, ok := t.startDir(ctx, "glob", p.Path)
	if !ok {
		return res, nil
	}
	var found []string
	more := 0
	spec := walkSpec{keep: func(e *walkEntry) bool {
		return permission.MatchGlob(p.Pattern, relTo(start, e.Rel))
	}}
	err = walkTreeSpec(ctx, t.paths.Root(), start, spec, func(e *walkEntry) error {
		if e.IsDir() {
			return nil
		}
		if len(found) < maxGlobResults {
			found = append(found, e.Rel)
			return nil
		}
		more++
		if more >= maxCounted {
			return errStopWalk
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("glob: %w", err)
	}
	out := Result{Metadata: map[string]any{"count": len(found) + more}}
	if len(found) == 0 {
		out.Output = "No files found."
		return out, nil
	}
	out.Output = strings.Join(found, "\n")
	if more > 0 {
		out.Truncated = true
		out.Output += fmt.Sprintf("\n(%s more files not shown; use a narrower pattern or path)", countText(more))
	}
	return out, nil
}

// maxCounted bounds how far a walk goes on counting what it does not show.
const maxCounted = 10_000

// countText renders a count that stopped at maxCounted.
func countText(n int) string {
	if n >= maxCounted {
		return fmt.Sprintf("at least %d", n)
	}
	return fmt.Sprint(n)
}

// dirOrRoot is the directory argument, "." when empty.
func dirOrRoot(p string) string {
	if strings.TrimSpace(p) == "" {
		return "."
	}
	return p
}

// relTo is rel relative to the directory start (both work-tree-relative).
func relTo(start, rel string) string {
	if start == "." {
		return rel
	}
	return strings.TrimPrefix(rel, start+"/")
}

// startDir resolves a walk's start directory inside the work tree.
func (b base) startDir(ctx context.Context, tool, dir string) (string, Result, bool) {
	target, err := b.resolve(ctx, dirOrRoot(dir))
	if err != nil {
		return "", errorResult("%s: %v", tool, err), false
	}
	if !target.Inside {
		return "", errorResult("%s: %s is outside the work tree; only the work tree can be searched.", tool, display(target)), false
	}
	fi, err := b.statTarget(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errorResult("%s: directory not found: %s. Use list to see what exists.", tool, display(target)), false
	case err != nil:
		return "", errorResult("%s: %v", tool, err), false
	case !fi.IsDir():
		return "", errorResult("%s: %s is a file, not a directory. Use read to see it.", tool, display(target)), false
	}
	return target.Rel, Result{}, true
}
