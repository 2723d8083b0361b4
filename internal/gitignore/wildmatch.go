package gitignore

import "strings"

// wildmatch results, as in git's wildmatch.c.
const (
	wmNoMatch = iota
	wmMatch
	wmAbortAll
	wmAbortToStarStar
)

// Wildmatch reports whether text matches the git glob pattern. With
// pathname set, '*', '?' and classes never match '/', and "**" between
// slashes matches any number of directories. It is a port of git's
// wildmatch.c (without case folding), because gitignore semantics hang on
// its details: "[!…]" and "[^…]" negate, POSIX classes, a ']' first in a
// class is literal, and "**" next to other characters is a plain '*'.
func Wildmatch(pattern, text string, pathname bool) bool {
	return dowild(pattern, text, pathname) == wmMatch
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func dowild(pat, text string, pathname bool) int {
	p, t := 0, 0
	for ; p < len(pat); p, t = p+1, t+1 {
		pch := pat[p]
		tch := at(text, t)
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		switch pch {
		case '\\':
			p++
			if at(pat, p) != tch {
				return wmNoMatch
			}
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
		case '*':
			r, done := matchStar(pat, &p, text, &t, pathname)
			if done {
				return r
			}
		case '[':
			r, ok := matchClass(pat, &p, tch, pathname)
			if !ok {
				return r
			}
		default:
			if tch != pch {
				return wmNoMatch
			}
		}
	}
	if t < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// matchStar handles a '*' or '**' at pat[*p]. When done is false the
// caller continues its loop with *p and *t advanced (a single '*' followed
// by '/' consumed one directory name).
func matchStar(pat string, p *int, text string, t *int, pathname bool) (int, bool) {
	matchSlash := !pathname
	*p++
	if at(pat, *p) == '*' {
		prev := *p - 2
		for *p++; at(pat, *p) == '*'; *p++ {
		}
		c := at(pat, *p)
		if !pathname {
			matchSlash = true
		} else if (prev < 0 || pat[prev] == '/') && (c == 0 || c == '/' || (c == '\\' && at(pat, *p+1) == '/')) {
			if c == '/' && dowild(pat[*p+1:], text[*t:], pathname) == wmMatch {
				return wmMatch, true
			}
			matchSlash = true
		} else {
			matchSlash = false
		}
	}
	if *p >= len(pat) {
		if !matchSlash && strings.IndexByte(text[*t:], '/') >= 0 {
			return wmNoMatch, true
		}
		return wmMatch, true
	}
	if !matchSlash && pat[*p] == '/' {
		i := strings.IndexByte(text[*t:], '/')
		if i < 0 {
			return wmNoMatch, true
		}
		*t += i
		return 0, false
	}
	return matchStarLoop(pat[*p:], text, *t, matchSlash, pathname), true
}

func matchStarLoop(rest, text string, t int, matchSlash, pathname bool) int {
	for t < len(text) {
		if c := rest[0]; c != '*' && c != '?' && c != '[' && c != '\\' {
			for t < len(text) && (matchSlash || text[t] != '/') && text[t] != c {
				t++
			}
			if t >= len(text) || text[t] != c {
				if matchSlash {
					return wmAbortAll
				}
				return wmAbortToStarStar
			}
		}
		m := dowild(rest, text[t:], pathname)
		if m != wmNoMatch {
			if !matchSlash || m != wmAbortToStarStar {
				return m
			}
		} else if !matchSlash && text[t] == '/' {
			return wmAbortToStarStar
		}
		t++
	}
	return wmAbortAll
}

// matchClass matches a bracket expression at pat[*p] against tch. ok is
// false when the match failed with result r.
func matchClass(pat string, p *int, tch byte, pathname bool) (r int, ok bool) {
	*p++
	pch := at(pat, *p)
	if pch == '^' {
		pch = '!'
	}
	negated := pch == '!'
	if negated {
		*p++
		pch = at(pat, *p)
	}
	var prev byte
	matched := false
	for {
		if pch == 0 {
			return wmAbortAll, false
		}
		switch {
		case pch == '\\':
			*p++
			pch = at(pat, *p)
			if pch == 0 {
				return wmAbortAll, false
			}
			if tch == pch {
				matched = true
			}
		case pch == '-' && prev != 0 && at(pat, *p+1) != 0 && at(pat, *p+1) != ']':
			m, valid := classRange(pat, p, prev, tch)
			if !valid {
				return wmAbortAll, false
			}
			matched = matched || m
			pch = 0
		case pch == '[' && at(pat, *p+1) == ':':
			m, plain, valid := classNamed(pat, p, tch)
			if !valid {
				return wmAbortAll, false
			}
			matched = matched || m
			if !plain {
				pch = 0
			}
		case tch == pch:
			matched = true
		}
		prev = pch
		*p++
		pch = at(pat, *p)
		if pch == ']' {
			break
		}
	}
	if matched == negated || (pathname && tch == '/') {
		return wmNoMatch, false
	}
	return 0, true
}

// classRange matches the range from prev to the character after the '-'
// at pat[*p] against tch, leaving *p on the range's end; valid is false
// when the pattern ends inside it.
func classRange(pat string, p *int, prev, tch byte) (matched, valid bool) {
	*p++
	pch := pat[*p]
	if pch == '\\' {
		*p++
		pch = at(pat, *p)
		if pch == 0 {
			return false, false
		}
	}
	return tch <= pch && tch >= prev, true
}

// classNamed matches a "[:name:]" class at pat[*p] against tch, leaving
// *p on its final ']'. Without the ":]" the '[' is plain (plain is true,
// *p unmoved); valid is false for an unknown name or no ']' at all.
func classNamed(pat string, p *int, tch byte) (matched, plain, valid bool) {
	s := *p + 2
	e := s
	for e < len(pat) && pat[e] != ']' {
		e++
	}
	if e >= len(pat) {
		return false, false, false
	}
	if e-s-1 < 0 || pat[e-1] != ':' {
		return tch == '[', true, true
	}
	*p = e
	m, valid := posixClass(pat[s:e-1], tch)
	return m, false, valid
}

func posixClass(name string, c byte) (matched, valid bool) { //nolint:gocyclo // one case per POSIX class, as wildmatch.c has them
	isUpper := c >= 'A' && c <= 'Z'
	isLower := c >= 'a' && c <= 'z'
	isDigit := c >= '0' && c <= '9'
	isAlpha := isUpper || isLower
	isPrint := c >= 0x20 && c < 0x7f
	isSpace := c == ' ' || (c >= '\t' && c <= '\r')
	switch name {
	case "alnum":
		return isAlpha || isDigit, true
	case "alpha":
		return isAlpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return isPrint && c != ' ', true
	case "lower":
		return isLower, true
	case "print":
		return isPrint, true
	case "punct":
		return isPrint && c != ' ' && !isAlpha && !isDigit, true
	case "space":
		return isSpace, true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
