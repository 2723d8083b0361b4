package batchreport

import (
	"bytes"
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
	var st DiffStat
	var oldLeft, newLeft int
	for len(patch) > 0 {
		line := patch
		if i := bytes.IndexByte(patch, '\n'); i >= 0 {
			line, patch = patch[:i], patch[i+1:]
		} else {
			patch = nil
		}
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case len(line) == 0 || line[0] == ' ':
				oldLeft--
				newLeft--
			case line[0] == '-':
				oldLeft--
				st.Deletions++
			case line[0] == '+':
				newLeft--
				st.Additions++
			case line[0] == '\\': // "\ No newline at end of file"
			default:
				oldLeft, newLeft = 0, 0 // a malformed hunk: stop counting it
			}
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte("diff --git ")):
			st.Files++
		case bytes.HasPrefix(line, []byte("@@ ")):
			oldLeft, newLeft = hunkCounts(line)
		}
	}
	return st
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
