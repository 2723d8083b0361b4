package batchreport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// DiffStat counts a unified diff (git format, as runner/snapshot writes
// it): files, and lines added and removed inside hunks. Binary files count
// as files with no lines.
type DiffStat struct {
	Files     int
	Additions int
	Deletions int
}

// CountDiff counts patch. It follows each hunk's line counts ("@@ -a,b
// +c,d @@"), so content lines that look like headers ("--- x" removed,
// "+++ y" added) are counted right, and text outside hunks is never counted.
func CountDiff(patch []byte) DiffStat {
	var c diffCounter
	for len(patch) > 0 {
		line := patch
		if i := bytes.IndexByte(patch, '\n'); i >= 0 {
			line, patch = patch[:i], patch[i+1:]
		} else {
			patch = nil
		}
		c.line(line)
	}
	return c.st
}

// CountDiffFile counts the patch file at path as CountDiff does, a line
// at a time, so a patch of any size takes memory for its longest line only.
func CountDiffFile(path string) (DiffStat, error) {
	f, err := os.Open(path)
	if err != nil {
		return DiffStat{}, err
	}
	defer f.Close()
	var c diffCounter
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: only its first byte matters.
			c.line(line[:1])
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else {
			c.line(bytes.TrimSuffix(line, []byte("\n")))
		}
		if err == io.EOF {
			return c.st, nil
		}
		if err != nil {
			return c.st, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// diffCounter is CountDiff's state between lines.
type diffCounter struct {
	st               DiffStat
	oldLeft, newLeft int
}

// line counts one line (without its newline).
func (c *diffCounter) line(line []byte) {
	if c.oldLeft > 0 || c.newLeft > 0 {
		switch {
		case len(line) == 0 || line[0] == ' ':
			c.oldLeft--
			c.newLeft--
		case line[0] == '-':
			c.oldLeft--
			c.st.Deletions++
		case line[0] == '+':
			c.newLeft--
			c.st.Additions++
		case line[0] == '\\': // "\ No newline at end of file"
		default:
			c.oldLeft, c.newLeft = 0, 0 // a malformed hunk: stop counting it
		}
		return
	}
	switch {
	case bytes.HasPrefix(line, []byte("diff --git ")):
		c.st.Files++
	case bytes.HasPrefix(line, []byte("@@ ")):
		c.oldLeft, c.newLeft = hunkCounts(line)
	}
}

// hunkCounts parses the line counts of "@@ -a[,b] +c[,d] @@" (a missing
// count is 1); zeros for a malformed header.
func hunkCounts(line []byte) (oldN, newN int) {
	f := bytes.Fields(line)
	if len(f) < 3 || len(f[1]) < 2 || len(f[2]) < 2 || f[1][0] != '-' || f[2][0] != '+' {
		return 0, 0
	}
	return rangeCount(f[1][1:]), rangeCount(f[2][1:])
}

func rangeCount(r []byte) int {
	_, count, ok := bytes.Cut(r, []byte(","))
	if !ok {
		return 1
	}
	n, err := strconv.Atoi(string(count))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
