package permission

import (
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Hole stands for a part of a command that is only known at run time (a
// parameter expansion, a command substitution, a glob). It never equals a
// pattern rune.
const Hole rune = -1

// isPathPermission reports whether patterns of permission are file globs
// (doublestar) rather than command wildcards.
func isPathPermission(permission string) bool {
	switch permission {
	case Read, Edit, ExternalDirectory:
		return true
	}
	return false
}

// MatchPath matches a slash path against a doublestar glob. The bare
// pattern "*" (a bare action in the spec) matches everything.
func MatchPath(pattern, path string) bool {
	if pattern == "*" || pattern == "**" {
		return true
	}
	return MatchGlob(pattern, path)
}

// MatchGlob is doublestar.Match, false for a bad pattern. A pattern
// "**/X", X holding no '/' and no "**", is matched against path's last
// element only: the same answer, at a cost that does not grow with depth.
func MatchGlob(pattern, path string) bool {
	if rest, ok := strings.CutPrefix(pattern, "**/"); ok && rest != "" && !strings.Contains(rest, "/") && !strings.Contains(rest, "**") {
		if base := path[strings.LastIndexByte(path, '/')+1:]; base != "" {
			pattern, path = rest, base
		}
	}
	ok, err := doublestar.Match(pattern, path)
	return err == nil && ok
}

// wildcardAlternatives returns the patterns a command rule stands for: a
// trailing " *" also matches the bare command ("go test *" matches
// "go test").
func wildcardAlternatives(pattern string) []string {
	if base, ok := strings.CutSuffix(pattern, " *"); ok {
		return []string{pattern, base}
	}
	return []string{pattern}
}

// MatchAll reports whether pattern matches subject for every possible value
// of its holes (Hole runes): a hole can only be covered by a '*'. '*' matches any run of
// runes (spaces and slashes included), '?' one rune.
func MatchAll(pattern string, subject []rune) bool {
	for _, p := range wildcardAlternatives(pattern) {
		if globAll([]rune(p), subject) {
			return true
		}
	}
	return false
}

// MatchSome reports whether pattern matches subject for some value of its
// holes (Hole runes): a hole can stand for anything. Deny rules use it, so that a command
// that might expand to a denied one is denied.
func MatchSome(pattern string, subject []rune) bool {
	if !slices.Contains(subject, Hole) {
		return MatchAll(pattern, subject) // nothing unknown: the linear matcher decides
	}
	for _, p := range wildcardAlternatives(pattern) {
		if globSome([]rune(p), subject) {
			return true
		}
	}
	return false
}

// globAll is the classic linear wildcard match with backtracking to the last
// star; holes only match under a star.
func globAll(p, s []rune) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && s[si] != Hole && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// globSome matches with wildcards on both sides: a '*' in p and a Hole in s
// each match any sequence. Dynamic programming over (pattern, subject)
// prefixes, one row at a time.
func globSome(p, s []rune) bool {
	// prev[j]: p[:i] matches s[:j]
	prev := make([]bool, len(s)+1)
	cur := make([]bool, len(s)+1)
	prev[0] = true
	for j := 1; j <= len(s); j++ {
		prev[j] = prev[j-1] && s[j-1] == Hole
	}
	for i := 1; i <= len(p); i++ {
		pc := p[i-1]
		cur[0] = prev[0] && pc == '*'
		for j := 1; j <= len(s); j++ {
			sc := s[j-1]
			switch {
			case pc == '*':
				cur[j] = prev[j] || cur[j-1]
			case sc == Hole:
				// the Hole ends here, or it also covers pc
				cur[j] = cur[j-1] || prev[j] || prev[j-1]
			default:
				cur[j] = prev[j-1] && (pc == '?' || pc == sc)
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(s)]
}
