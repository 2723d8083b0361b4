package tools

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// searcher finds the lines of whole file contents that a regular
// expression matches, as a line-by-line match would (lines split at '\n',
// one trailing '\r' dropped, as bufio.ScanLines does). Before any line is
// split it looks for a literal that every match must contain (extracted
// from the parsed expression), so most files are rejected by one
// bytes.Index (SIMD) over their contents, and only lines holding the
// literal are matched with the regexp.
type searcher struct {
	re   *regexp.Regexp
	lit  []byte   // every match contains lit; nil when none is known
	fold bool     // lit is lower-case ASCII matched without case
	any  [][]byte // else: every match contains one of these; nil when unknown
	pure bool     // the expression is exactly lit: Contains decides
}

func newSearcher(re *regexp.Regexp) *searcher {
	s := &searcher{re: re}
	if prefix, complete := re.LiteralPrefix(); complete && prefix != "" {
		s.lit, s.pure = []byte(prefix), true
		return s
	}
	sre, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return s
	}
	sre = sre.Simplify()
	if l := requiredLiteral(sre, false); len(l) > 0 {
		s.lit = l
		return s
	}
	if s.any = alternativeLiterals(sre); s.any != nil {
		return s
	}
	if l := requiredLiteral(sre, true); len(l) >= 2 {
		s.lit, s.fold = l, true
	}
	return s
}

// requiredLiteral returns the longest literal found that every match of
// re contains, or nil. U+FFFD (which matches any invalid UTF-8 byte) ends
// a literal. Without fold only case-sensitive literals count; with fold
// only case-folded ASCII ones, lower-cased (see literalBytes).
func requiredLiteral(re *syntax.Regexp, fold bool) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		return literalBytes(re, fold)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0], fold)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0], fold)
		}
	case syntax.OpConcat:
		var best, run []byte
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				if b := literalBytes(sub, fold); len(b) > 0 && len(b) == len(string(sub.Rune)) {
					run = append(run, b...)
					best = longer(best, run)
					continue
				}
			}
			best = longer(best, run)
			run = nil
			best = longer(best, requiredLiteral(sub, fold))
		}
		return longer(best, run)
	}
	return nil
}

// alternativeLiterals returns, for an alternation (possibly captured)
// whose every branch has a required literal, those literals; else nil.
func alternativeLiterals(re *syntax.Regexp) [][]byte {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpAlternate {
		return nil
	}
	var out [][]byte
	for _, sub := range re.Sub {
		l := requiredLiteral(sub, false)
		if len(l) == 0 {
			return nil
		}
		out = append(out, l)
	}
	return out
}

// literalBytes is the UTF-8 of a literal up to its first U+FFFD. Without
// fold it is nil for a case-folded literal; with fold it is nil for a
// case-sensitive one and else the lower-cased bytes up to the first rune
// that is not ASCII or is k or s (which also fold to the Kelvin sign and
// the long s, so no byte comparison finds every match).
func literalBytes(re *syntax.Regexp, fold bool) []byte {
	if (re.Flags&syntax.FoldCase != 0) != fold {
		return nil
	}
	var b []byte
	for _, r := range re.Rune {
		if r == utf8.RuneError {
			break
		}
		if fold {
			if r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S' {
				break
			}
			b = append(b, lowerASCII(byte(r)))
			continue
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// indexFold is bytes.Index for lit (lower-case ASCII) without ASCII case.
// The candidates are the places of lit's first byte in either case, each
// found with bytes.IndexByte and each scan resumed where it stopped, so a
// search reads s at most twice.
func indexFold(s, lit []byte) int {
	c := lit[0]
	u := c
	if 'a' <= c && c <= 'z' {
		u = c - 'a' + 'A'
	}
	nextC, nextU := -2, -2 // -2: not searched yet; -1: none left
	for i := 0; i+len(lit) <= len(s); {
		if nextC != -1 && nextC < i {
			nextC = indexFrom(s, c, i)
		}
		if u == c {
			nextU = nextC
		} else if nextU != -1 && nextU < i {
			nextU = indexFrom(s, u, i)
		}
		at := nextC
		if at < 0 || (nextU >= 0 && nextU < at) {
			at = nextU
		}
		if at < 0 || at+len(lit) > len(s) {
			return -1
		}
		if equalFoldASCII(s[at:at+len(lit)], lit) {
			return at
		}
		i = at + 1
	}
	return -1
}

func indexFrom(s []byte, c byte, from int) int {
	if j := bytes.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

func equalFoldASCII(s, lower []byte) bool {
	for i := range lower {
		if lowerASCII(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func longer(a, b []byte) []byte {
	if len(b) > len(a) {
		return append([]byte(nil), b...)
	}
	return a
}

// grepLine is one matching line: its 1-based number and its text.
type grepLine struct {
	n    int
	text []byte
}

// search returns up to max matching lines of content, in order.
func (s *searcher) search(content []byte, max int) []grepLine {
	switch {
	case s.lit != nil:
		return s.searchLiteral(content, max)
	case s.any != nil:
		for _, l := range s.any {
			if bytes.Contains(content, l) {
				return s.searchLines(content, max)
			}
		}
		return nil
	}
	return s.searchLines(content, max)
}

// searchLiteral visits only the lines holding s.lit.
func (s *searcher) searchLiteral(c []byte, max int) []grepLine {
	var out []grepLine
	pos, counted, n := 0, 0, 1
	for pos < len(c) && len(out) < max {
		var i int
		if s.fold {
			i = indexFold(c[pos:], s.lit)
		} else {
			i = bytes.Index(c[pos:], s.lit)
		}
		if i < 0 {
			break
		}
		at := pos + i
		start := pos + bytes.LastIndexByte(c[pos:at], '\n') + 1
		end := len(c)
		if j := bytes.IndexByte(c[at:], '\n'); j >= 0 {
			end = at + j
		}
		n += bytes.Count(c[counted:start], []byte{'\n'})
		counted = start
		line := trimCR(c[start:end])
		if s.pure && bytes.Contains(line, s.lit) || !s.pure && s.re.Match(line) {
			out = append(out, grepLine{n: n, text: line})
		}
		pos = end + 1
	}
	return out
}

// searchLines matches every line.
func (s *searcher) searchLines(c []byte, max int) []grepLine {
	var out []grepLine
	for start, n := 0, 1; start < len(c) && len(out) < max; n++ {
		end := len(c)
		if j := bytes.IndexByte(c[start:], '\n'); j >= 0 {
			end = start + j
		}
		if line := trimCR(c[start:end]); s.re.Match(line) {
			out = append(out, grepLine{n: n, text: line})
		}
		start = end + 1
	}
	return out
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// fileBufs are read buffers reused across files; buffers that grew past
// 1 MiB are dropped rather than kept.
var fileBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// errSkipFile marks a file grep does not search: binary or too large.
var errSkipFile = errors.New("skipped")

// readForGrep reads the file open as fd into a pooled buffer (give it back
// with putBuf). It returns errSkipFile for a file with a NUL byte in its
// first binarySniffBytes (binary, as git decides) or larger than limit.
func readForGrep(fd int, limit int) (*[]byte, error) {
	bp := fileBufs.Get().(*[]byte)
	b := (*bp)[:0]
	sniffed, sized := false, false
	for {
		if len(b) == cap(b) {
			want := 2 * cap(b)
			var st unix.Stat_t
			if !sized && unix.Fstat(fd, &st) == nil && st.Size >= int64(len(b)) {
				want = int(min(st.Size, int64(limit))) + 1 // one growth to the whole file (and EOF)
			}
			sized = true
			nb := make([]byte, len(b), max(want, len(b)+1))
			copy(nb, b)
			b = nb
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			*bp = b
			putBuf(bp)
			return nil, fmt.Errorf("read: %w", err)
		}
		b = b[:len(b)+n]
		if !sniffed && (n == 0 || len(b) >= binarySniffBytes) {
			sniffed = true
			if bytes.IndexByte(b[:min(len(b), binarySniffBytes)], 0) >= 0 {
				*bp = b
				putBuf(bp)
				return nil, errSkipFile
			}
		}
		if len(b) > limit {
			*bp = b
			putBuf(bp)
			return nil, errSkipFile
		}
		if n == 0 {
			*bp = b
			return bp, nil
		}
	}
}

func putBuf(bp *[]byte) {
	if cap(*bp) <= 1<<20 {
		*bp = (*bp)[:0]
		fileBufs.Put(bp)
	}
}
