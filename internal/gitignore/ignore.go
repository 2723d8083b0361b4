package gitignore

import (
	"bytes"
	"strings"
)

// Pattern flags, as in git's dir.c.
const (
	patNegative = 1 << iota
	patMustBeDir
	patNoDir
)

// Pattern is one parsed exclude line.
type Pattern struct {
	pat    string // the glob, without '!' and trailing '/'
	base   string // repository-relative directory of the file, "" or "dir/sub/"
	flags  int
	nowild int // length of the literal prefix, as git's simple_length
}

// ParseFile parses the contents of a .gitignore, info/exclude or
// excludes file whose patterns are relative to base ("" or "dir/"). It
// follows git's add_patterns_from_buffer: a leading UTF-8 BOM is dropped,
// CRLF line ends are accepted, '#' starts a comment, and unescaped trailing
// spaces are trimmed.
func ParseFile(data []byte, base string) []Pattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []Pattern
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if p, ok := ParseLine(trimTrailingSpaces(string(line)), base); ok {
			out = append(out, p)
		}
	}
	return out
}

// trimTrailingSpaces drops trailing spaces that are not escaped with a
// backslash (git's trim_trailing_spaces).
func trimTrailingSpaces(s string) string {
	end := -1 // index just after the last character to keep
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			continue
		case '\\':
			i++
			if i == len(s) {
				return s
			}
		}
		end = i + 1
	}
	if end < 0 {
		return ""
	}
	return s[:end]
}

// ParseLine parses one pattern line (comments and trailing spaces already
// handled, as ParseFile does); ok is false for a line that is no pattern.
func ParseLine(p, base string) (Pattern, bool) {
	ip := Pattern{base: base}
	if strings.HasPrefix(p, "!") {
		ip.flags |= patNegative
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		ip.flags |= patMustBeDir
		p = p[:len(p)-1]
	}
	if !strings.Contains(p, "/") {
		ip.flags |= patNoDir
	}
	if p == "" && ip.flags&patMustBeDir == 0 {
		return ip, false
	}
	ip.pat = p
	ip.nowild = strings.IndexAny(p, "*?[\\")
	if ip.nowild < 0 {
		ip.nowild = len(p)
	}
	return ip, true
}

// Matches reports whether the pattern matches path, a repository-relative
// slash path (basename its last element).
func (ip *Pattern) Matches(path string, isDir bool) bool {
	if ip.flags&patMustBeDir != 0 && !isDir {
		return false
	}
	if ip.flags&patNoDir != 0 {
		base := path[strings.LastIndexByte(path, '/')+1:]
		if ip.nowild == len(ip.pat) {
			return base == ip.pat
		}
		return Wildmatch(ip.pat, base, false)
	}
	return ip.matchPathname(path)
}

// matchPathname is git's match_pathname: the path must lie under the
// pattern's base, and the literal prefix is compared before the rest is
// matched with WM_PATHNAME (so "a**" after the prefix acts like "**").
func (ip *Pattern) matchPathname(path string) bool {
	pat, prefix := ip.pat, ip.nowild
	if strings.HasPrefix(pat, "/") {
		pat, prefix = pat[1:], prefix-1
	}
	if !strings.HasPrefix(path, ip.base) || len(path) == len(ip.base) {
		return false
	}
	name := path[len(ip.base):]
	if prefix > 0 {
		if prefix > len(name) || name[:prefix] != pat[:prefix] {
			return false
		}
		pat, name = pat[prefix:], name[prefix:]
		if pat == "" && name == "" {
			return true
		}
	}
	return Wildmatch(pat, name, true)
}

// Stack is the chain of pattern lists that apply inside one
// directory: the deepest .gitignore last. Lists are immutable once pushed,
// so walkers share parents across goroutines.
type Stack struct {
	parent *Stack
	pats   []Pattern
}

// Push returns a stack with pats on top, or s itself when pats is empty.
func (s *Stack) Push(pats []Pattern) *Stack {
	if len(pats) == 0 {
		return s
	}
	return &Stack{parent: s, pats: pats}
}

// Excluded reports whether path is ignored by the last matching pattern,
// searching the deepest list first as git does. It does not look at parent
// directories: the walker never descends into an excluded directory.
func (s *Stack) Excluded(path string, isDir bool) bool {
	for l := s; l != nil; l = l.parent {
		for i := len(l.pats) - 1; i >= 0; i-- {
			if l.pats[i].Matches(path, isDir) {
				return l.pats[i].flags&patNegative == 0
			}
		}
	}
	return false
}
