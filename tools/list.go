package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

//go:embed list.md
var listDescription string

// maxListEntries bounds the entries list shows.
const maxListEntries = 500

// ListParams are the arguments of the list tool.
type ListParams struct {
	Path string `json:"path,omitempty" description:"The directory to list, relative to the work tree. Default: the work tree."`
}

type listTool struct{ base }

func (t *listTool) Info() Info {
	return Info{Name: "list", Description: listDescription, Parameters: schemaFor(ListParams{})}
}

// Permissions: a read of the directory listed.
func (t *listTool) Permissions(input json.RawMessage) ([]Request, error) {
	p, err := decodeParams[ListParams](input)
	if err != nil {
		return nil, err
	}
	return []Request{{Permission: permission.Read, Target: dirOrRoot(p.Path)}}, nil
}

func (t *listTool) Run(ctx context.Context, call Call) (Result, error) {
	p, err := decodeParams[ListParams](call.Input)
	if err != nil {
		return badArguments("list", err), nil
	}
	start, res, ok := t.startDir(ctx, "list", p.Path)
	if !ok {
		return res, nil
	}
	var b strings.Builder
	b.WriteString(start + "/\n")
	if start == "." {
		b.Reset()
		b.WriteString("./\n")
	}
	n, more := 0, 0
	err = walkTree(ctx, t.paths.Root(), start, func(e *walkEntry) error {
		if n >= maxListEntries {
			more++
			if more >= maxCounted {
				return errStopWalk
			}
			return nil
		}
		n++
		name := path.Base(e.Rel)
		if e.IsDir() {
			name += "/"
		}
		b.WriteString(strings.Repeat("  ", e.Depth) + name + "\n")
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("list: %w", err)
	}
	out := Result{Output: strings.TrimSuffix(b.String(), "\n"), Metadata: map[string]any{"entries": n + more}}
	if n == 0 {
		out.Output += "\n(empty)"
	}
	if more > 0 {
		out.Truncated = true
		out.Output += fmt.Sprintf("\n(%s more entries not shown; list a subdirectory)", countText(more))
	}
	return out, nil
}
