package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

//go:embed edit.md
var editDescription string

// EditParams are the arguments of the edit tool.
type EditParams struct {
	Path       string `json:"path" description:"The file to edit, relative to the work tree."`
	OldString  string `json:"old_string" description:"The exact text to replace, including indentation; enough context to match one place."`
	NewString  string `json:"new_string" description:"The text to replace it with (must differ from old_string)."`
	ReplaceAll bool   `json:"replace_all,omitempty" description:"Replace every occurrence of old_string (default false)."`
}

type editTool struct{ base }

func (t *editTool) Info() Info {
	return Info{Name: "edit", Description: editDescription, Parameters: schemaFor(EditParams{})}
}

// Permissions: an edit of the path.
func (t *editTool) Permissions(input json.RawMessage) ([]Request, error) {
	p, err := decodeParams[EditParams](input)
	if err != nil {
		return nil, err
	}
	return []Request{{Permission: permission.Edit, Target: p.Path}}, nil
}

func (t *editTool) Run(ctx context.Context, call Call) (Result, error) {
	p, err := decodeParams[EditParams](call.Input)
	if err != nil {
		return badArguments("edit", err), nil
	}
	if p.OldString == p.NewString {
		return errorResult("edit: old_string and new_string are the same; there is nothing to change."), nil
	}
	target, err := t.resolve(ctx, p.Path)
	if err != nil {
		return errorResult("edit: %v", err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("edit: %w", context.Cause(ctx))
	}
	data, err := t.readTarget(target)
	switch {
	case errors.Is(err, fs.ErrNotExist) && p.OldString == "":
		return t.create(target, p.NewString)
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("edit: file not found: %s. Use glob or list to find the right path, or write to create a file.", display(target)), nil
	case err != nil:
		return errorResult("edit: %v", err), nil
	}
	content := string(data)
	if p.OldString == "" {
		if content != "" {
			return errorResult("edit: old_string is empty but %s already has content. Give the text to replace, or use write to replace the whole file.", display(target)), nil
		}
		return t.create(target, p.NewString)
	}
	m := findMatches(content, p.OldString, p.NewString)
	if res, ok := checkMatches(m, content, p, display(target)); !ok {
		return res, nil
	}
	updated := replaceSpans(content, m.spans, m.newText)
	if _, err := t.writeTarget(target, []byte(updated)); err != nil {
		return errorResult("edit: %v", err), nil
	}
	return Result{
		Output: fmt.Sprintf("Edited %s: replaced %d occurrence(s) (%s match).\n%s",
			display(target), len(m.spans), m.strategy, snippet(updated, m.spans[0].start, len(m.newText))),
		Metadata: map[string]any{"path": display(target), "replacements": len(m.spans), "match": m.strategy},
		Touched:  touched(target),
	}, nil
}

func (t *editTool) create(target permission.Target, content string) (Result, error) {
	if _, err := t.writeTarget(target, []byte(content)); err != nil {
		return errorResult("edit: %v", err), nil
	}
	return Result{
		Output:   fmt.Sprintf("Created %s (%d bytes).", display(target), len(content)),
		Metadata: map[string]any{"path": display(target), "created": true},
		Touched:  touched(target),
	}, nil
}

// checkMatches explains a missing or ambiguous match to the model.
func checkMatches(m matchResult, content string, p EditParams, name string) (Result, bool) {
	switch {
	case len(m.spans) == 0:
		return errorResult("edit: old_string was not found in %s. It must match the file's current text "+
			"(whitespace differences are tolerated only when the match is unique). Read the file again and copy the text to change exactly.%s",
			name, similarLines(content, p.OldString)), false
	case len(m.spans) > 1 && !p.ReplaceAll:
		lines := make([]string, 0, len(m.spans))
		for i, s := range m.spans {
			if i == 10 {
				lines = append(lines, "…")
				break
			}
			lines = append(lines, fmt.Sprint(lineOf(content, s.start)))
		}
		return errorResult("edit: old_string matches %d places in %s (lines %s). Include more surrounding lines in old_string so that it matches exactly one place, or set replace_all to true to change every occurrence.",
			len(m.spans), name, strings.Join(lines, ", ")), false
	}
	return Result{}, true
}

// similarLines points at lines that contain the first line of old.
func similarLines(content, old string) string {
	first := ""
	for _, l := range strings.Split(old, "\n") {
		if first = strings.TrimSpace(l); first != "" {
			break
		}
	}
	if first == "" {
		return ""
	}
	var hits []string
	for i, l := range splitLines(content) {
		if strings.Contains(l.text, first) {
			hits = append(hits, fmt.Sprint(i+1))
			if len(hits) == 5 {
				break
			}
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return fmt.Sprintf(" The first line of old_string appears on line(s) %s.", strings.Join(hits, ", "))
}

// snippet shows the numbered lines around an edit, for the model to check.
func snippet(content string, start, length int) string {
	first := lineOf(content, start)
	last := lineOf(content, min(start+length, len(content)))
	from, to := max(first-3, 1), last+3
	var b strings.Builder
	for i, l := range splitLines(content) {
		n := i + 1
		if n < from {
			continue
		}
		if n > to || n-from >= 40 {
			break
		}
		fmt.Fprintf(&b, "%6d\t%s\n", n, l.text)
	}
	return b.String()
}
