package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/seed43ef5acb/runner/tools/permission"
)

//go:embed write.md
var writeDescription string

// WriteParams are the arguments of the write tool.
type WriteParams struct {
	Path    string `json:"path" description:"The file to write, relative to the work tree."`
	Content string `json:"content" description:"The complete content to write to the file."`
}

type writeTool struct{ base }

func (t *writeTool) Info() Info {
	return Info{Name: "write", Description: writeDescription, Parameters: schemaFor(WriteParams{})}
}

// Permissions: an edit of the path.
func (t *writeTool) Permissions(input json.RawMessage) ([]Request, error) {
	p, err := decodeParams[WriteParams](input)
	if err != nil {
		return nil, err
	}
	return []Request{{Permission: permission.Edit, Target: p.Path}}, nil
}

func (t *writeTool) Run(ctx context.Context, call Call) (Result, error) {
	p, err := decodeParams[WriteParams](call.Input)
	if err != nil {
		return badArguments("write", err), nil
	}
	target, err := t.resolve(ctx, p.Path)
	if err != nil {
		return errorResult("write: %v", err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("write: %w", context.Cause(ctx))
	}
	if fi, err := t.statTarget(target); err == nil && fi.IsDir() {
		return errorResult("write: %s is a directory.", display(target)), nil
	}
	created, err := t.writeTarget(target, []byte(p.Content))
	if err != nil {
		return errorResult("write: %v", err), nil
	}
	verb := "Updated"
	if created {
		verb = "Created"
	}
	return Result{
		Output:   fmt.Sprintf("%s %s (%d bytes).", verb, display(target), len(p.Content)),
		Metadata: map[string]any{"path": display(target), "bytes": len(p.Content), "created": created},
		Touched:  touched(target),
	}, nil
}

// touched is the Touched list for a write to target: work-tree-relative
// paths only (a file outside the tree is not part of any snapshot).
func touched(target permission.Target) []string {
	if target.Inside {
		return []string{target.Rel}
	}
	return nil
}
