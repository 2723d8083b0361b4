package tools

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/seed43ef5acb/runner/tools/permission"
)

//go:embed read.md
var readDescription string

// Read limits.
const (
	DefaultReadLimit = 2000    // lines shown when limit is not given
	MaxLineLength    = 2000    // characters kept of one line
	maxReadBytes     = 256_000 // bytes of output, whatever the line count
	binarySniffBytes = 8000    // bytes examined to tell binary from text (as git)
)

// ReadParams are the arguments of the read tool.
type ReadParams struct {
	Path   string `json:"path" description:"The file to read, relative to the work tree."`
	Offset int    `json:"offset,omitempty" description:"The line number to start reading from (1-based). Default 1."`
	Limit  int    `json:"limit,omitempty" description:"The number of lines to read. Default 2000."`
}

type readTool struct{ base }

func (t *readTool) Info() Info {
	return Info{Name: "read", Description: readDescription, Parameters: schemaFor(ReadParams{})}
}

// Permissions: a read of the path.
func (t *readTool) Permissions(input json.RawMessage) ([]Request, error) {
	p, err := decodeParams[ReadParams](input)
	if err != nil {
		return nil, err
	}
	return []Request{{Permission: permission.Read, Target: p.Path}}, nil
}

func (t *readTool) Run(ctx context.Context, call Call) (Result, error) {
	p, err := decodeParams[ReadParams](call.Input)
	if err != nil {
		return badArguments("read", err), nil
	}
	if p.Offset < 0 || p.Limit < 0 {
		return errorResult("read: offset and limit must not be negative"), nil
	}
	target, err := t.resolve(ctx, p.Path)
	if err != nil {
		return errorResult("read: %v", err), nil
	}
	f, res, ok := t.openRegular(target, "read")
	if !ok {
		return res, nil
	}
	defer f.Close()
	if bin, err := isBinary(f); err != nil {
		return Result{}, fmt.Errorf("read %s: %w", target.Abs, err)
	} else if bin {
		return errorResult("read: %s is a binary file and cannot be shown as text. Use bash (for example `file` or `xxd | head`) if you must inspect it.", display(target)), nil
	}
	return readLines(ctx, f, display(target), max(p.Offset, 1), orDefault(p.Limit, DefaultReadLimit))
}

// openRegular opens a regular file, or explains to the model why not.
func (b base) openRegular(target permission.Target, tool string) (*os.File, Result, bool) {
	fi, err := b.statTarget(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errorResult("%s: file not found: %s. Use glob or list to find the right path.", tool, display(target)), false
	case err != nil:
		return nil, errorResult("%s: %v", tool, err), false
	case fi.IsDir():
		return nil, errorResult("%s: %s is a directory. Use list to see its entries.", tool, display(target)), false
	case !fi.Mode().IsRegular():
		return nil, errorResult("%s: %s is not a regular file.", tool, display(target)), false
	}
	f, err := b.openTarget(target, os.O_RDONLY, 0)
	if err != nil {
		return nil, errorResult("%s: %v", tool, err), false
	}
	if b.protectedFd(int(f.Fd())) {
		_ = f.Close()
		return nil, errorResult("%s: %v", tool, errProtectedName(target)), false
	}
	return f, Result{}, true
}

// isBinary reports a NUL byte in the first bytes of r, then rewinds it.
func isBinary(f *os.File) (bool, error) {
	buf := make([]byte, binarySniffBytes)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	return looksBinary(buf[:n]), nil
}

func looksBinary(b []byte) bool { return strings.IndexByte(string(b), 0) >= 0 }

// readLines formats lines [offset, offset+limit) of r with line numbers.
func readLines(ctx context.Context, r io.Reader, name string, offset, limit int) (Result, error) {
	br := bufio.NewReader(r)
	var out strings.Builder
	total, shown, cutLines := 0, 0, 0
	bytesFull := false
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			total++
			if total >= offset && shown < limit && !bytesFull {
				text := strings.TrimRight(line, "\r\n")
				if len([]rune(text)) > MaxLineLength {
					text = string([]rune(text)[:MaxLineLength]) + "… (line cut)"
					cutLines++
				}
				fmt.Fprintf(&out, "%6d\t%s\n", total, text)
				shown++
				bytesFull = out.Len() >= maxReadBytes
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, fmt.Errorf("read %s: %w", name, err)
		}
		if total%4096 == 0 && ctx.Err() != nil {
			return Result{}, fmt.Errorf("read %s: %w", name, context.Cause(ctx))
		}
	}
	res := Result{Metadata: map[string]any{"path": name, "lines": total, "shown": shown}}
	switch {
	case total == 0:
		res.Output = fmt.Sprintf("(%s is empty)", name)
		return res, nil
	case shown == 0:
		return errorResult("read: offset %d is past the end of %s, which has %d lines.", offset, name, total), nil
	}
	res.Output = out.String()
	if last := offset + shown - 1; last < total {
		res.Truncated = true
		res.Output += fmt.Sprintf("\n(showing lines %d-%d of %d; call read with offset=%d to see more)", offset, last, total, last+1)
	}
	if cutLines > 0 {
		res.Truncated = true
		res.Output += fmt.Sprintf("\n(%d long lines were cut at %d characters)", cutLines, MaxLineLength)
	}
	return res, nil
}

func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
