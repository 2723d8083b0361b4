package gitignore

import (
	"strings"
	"testing"
)

// Cases from git's t/t3070-wildmatch.sh: "path" is matching with
// WM_PATHNAME (as for gitignore patterns with a slash), "glob" without
// flags (as for basename patterns).
func TestWildmatch(t *testing.T) {
	tests := []struct {
		pattern, text string
		glob, path    bool
	}{
		{"foo", "foo", true, true},
		{"foo", "bar", false, false},
		{"", "", true, true},
		{"???", "foo", true, true},
		{"??", "foo", false, false},
		{"*", "foo", true, true},
		{"f*", "foo", true, true},
		{"*f", "foo", false, false},
		{"*foo*", "foo", true, true},
		{"*ob*a*r*", "foobar", true, true},
		{"*ab", "aaaaaaabababab", true, true},
		{"foo\\*", "foo*", true, true},
		{"foo\\*bar", "foobar", false, false},
		{"f\\\\oo", "f\\oo", true, true},
		{"*[al]?", "ball", true, true},
		{"[ten]", "ten", false, false},
		{"**[!te]", "ten", true, true},
		{"**[!ten]", "ten", false, false},
		{"t[a-g]n", "ten", true, true},
		{"t[!a-g]n", "ten", false, false},
		{"t[!a-g]n", "ton", true, true},
		{"t[^a-g]n", "ton", true, true},
		{"a[]]b", "a]b", true, true},
		{"a[]-]b", "a-b", true, true},
		{"a[]-]b", "a]b", true, true},
		{"a[]-]b", "aab", false, false},
		{"a[]a-]b", "aab", true, true},
		{"]", "]", true, true},
		{"foo*bar", "foo/baz/bar", true, false},
		{"foo**bar", "foo/baz/bar", true, false},
		{"foo**bar", "foobazbar", true, true},
		{"foo/**/bar", "foo/baz/bar", true, true},
		{"foo/**/**/bar", "foo/baz/bar", true, true},
		{"foo/**/bar", "foo/b/a/z/bar", true, true},
		{"foo/**/**/bar", "foo/b/a/z/bar", true, true},
		{"foo/**/bar", "foo/bar", true, true},
		{"foo/**/**/bar", "foo/bar", true, true},
		{"foo?bar", "foo/bar", true, false},
		{"foo[/]bar", "foo/bar", true, false},
		{"foo[^a-z]bar", "foo/bar", true, false},
		{"f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo/bar", true, false},
		{"f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo-bar", true, true},
		{"**/foo", "foo", true, true},
		{"**/foo", "XXX/foo", true, true},
		{"**/foo", "bar/baz/foo", true, true},
		{"*/foo", "bar/baz/foo", true, false},
		{"**/bar*", "foo/bar/baz", true, false},
		{"**/bar/*", "deep/foo/bar/baz", true, true},
		{"**/bar/*", "deep/foo/bar/baz/", true, false},
		{"**/bar/**", "deep/foo/bar/baz/", true, true},
		{"**/bar/*", "deep/foo/bar", false, false},
		{"**/bar/**", "deep/foo/bar/", true, true},
		{"**/bar**", "foo/bar/baz", true, false},
		{"*/bar/**", "foo/bar/baz/x", true, true},
		{"*/bar/**", "deep/foo/bar/baz/x", true, false},
		{"**/bar/*/*", "deep/foo/bar/baz/x", true, true},
		{"a[c-c]st", "acrt", false, false},
		{"a[c-c]rt", "acrt", true, true},
		{"[!]-]", "]", false, false},
		{"[!]-]", "a", true, true},
		{"\\", "", false, false},
		{"\\", "\\", false, false},
		{"*/\\", "XXX/\\", false, false},
		{"*/\\\\", "XXX/\\", true, true},
		{"foo", "foo", true, true},
		{"@foo", "@foo", true, true},
		{"@foo", "foo", false, false},
		{"\\[ab]", "[ab]", true, true},
		{"[[]ab]", "[ab]", true, true},
		{"[[:]ab]", "[ab]", true, true},
		{"[[::]ab]", "[ab]", false, false},
		{"[[:digit]ab]", "[ab]", true, true},
		{"[\\[:]ab]", "[ab]", true, true},
		{"\\??\\?b", "?a?b", true, true},
		{"\\a\\b\\c", "abc", true, true},
		{"", "foo", false, false},
		{"**/t[o]", "foo/bar/baz/to", true, true},
		{"[[:alpha:]][[:digit:]][[:upper:]]", "a1B", true, true},
		{"[[:digit:][:upper:][:space:]]", "a", false, false},
		{"[[:digit:][:upper:][:space:]]", "A", true, true},
		{"[[:digit:][:upper:][:space:]]", "1", true, true},
		{"[[:digit:][:upper:][:spaci:]]", "1", false, false},
		{"[[:digit:][:upper:][:space:]]", " ", true, true},
		{"[[:digit:][:upper:][:space:]]", ".", false, false},
		{"[[:digit:][:punct:][:space:]]", ".", true, true},
		{"[[:xdigit:]]", "5", true, true},
		{"[[:xdigit:]]", "f", true, true},
		{"[[:xdigit:]]", "D", true, true},
		{"[a-c[:digit:]x-z]", "5", true, true},
		{"[a-c[:digit:]x-z]", "b", true, true},
		{"[a-c[:digit:]x-z]", "y", true, true},
		{"[a-c[:digit:]x-z]", "q", false, false},
		{"[\\\\-^]", "]", true, true},
		{"[\\\\-^]", "[", false, false},
		{"[\\-_]", "-", true, true},
		{"[\\]]", "]", true, true},
		{"[\\]]", "\\]", false, false},
		{"[\\]]", "\\", false, false},
		{"a[]b", "ab", false, false},
		{"a[]b", "a[]b", false, false},
		{"ab[", "ab[", false, false},
		{"[!", "ab", false, false},
		{"[-", "ab", false, false},
		{"[-]", "-", true, true},
		{"[a-", "-", false, false},
		{"[!a-", "-", false, false},
		{"[--A]", "-", true, true},
		{"[--A]", "5", true, true},
		{"[ --]", " ", true, true},
		{"[ --]", "$", true, true},
		{"[ --]", "-", true, true},
		{"[ --]", "0", false, false},
		{"[---]", "-", true, true},
		{"[------]", "-", true, true},
		{"[a-e-n]", "j", false, false},
		{"[a-e-n]", "-", true, true},
		{"[!------]", "a", true, true},
		{"[]-a]", "[", false, false},
		{"[]-a]", "^", true, true},
		{"[!]-a]", "^", false, false},
		{"[!]-a]", "[", true, true},
		{"[a^bc]", "^", true, true},
		{"[a-]b]", "-b]", true, true},
		{"[\\]", "\\", false, false},
		{"[\\\\]", "\\", true, true},
		{"[!\\\\]", "\\", false, false},
		{"[A-\\\\]", "G", true, true},
		{"b*a", "aaabbb", false, false},
		{"*ba*", "aabcaa", false, false},
		{"[,]", ",", true, true},
		{"[\\\\,]", ",", true, true},
		{"[\\\\,]", "\\", true, true},
		{"[,-.]", "-", true, true},
		{"[,-.]", "+", false, false},
		{"[,-.]", "-.]", false, false},
		{"[\\1-\\3]", "2", true, true},
		{"[\\1-\\3]", "3", true, true},
		{"[\\1-\\3]", "4", false, false},
		{"[[-\\]]", "\\", true, true},
		{"[[-\\]]", "[", true, true},
		{"[[-\\]]", "]", true, true},
		{"[[-\\]]", "-", false, false},
		{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1", true, true},
		{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1", false, false},
		{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-/-70-iso8859-1", false, false},
		{"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1", true, true},
		{"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1", false, false},
		{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", true, true},
		{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", false, false},
		{"*/*/*", "foo", false, false},
		{"*/*/*", "foo/bar", false, false},
		{"*/*/*", "foo/bba/arr", true, true},
		{"*/*/*", "foo/bb/aa/rr", true, false},
		{"**/**/**", "foo/bb/aa/rr", true, true},
		{"*X*i", "abcXdefXghi", true, true},
		{"*X*i", "ab/cXd/efXg/hi", true, false},
		{"*/*X*/*/*i", "ab/cXd/efXg/hi", true, true},
		{"**/*X*/**/*i", "ab/cXd/efXg/hi", true, true},
	}
	for _, tt := range tests {
		// Without WM_PATHNAME, git only matches basenames against patterns
		// without a slash, so only those cases are checked.
		if strings.Contains(tt.pattern+tt.text, "/") {
			tt.glob = Wildmatch(tt.pattern, tt.text, false)
		}
		if got := Wildmatch(tt.pattern, tt.text, false); got != tt.glob {
			t.Errorf("Wildmatch(%q, %q, glob) = %v, want %v", tt.pattern, tt.text, got, tt.glob)
		}
		if got := Wildmatch(tt.pattern, tt.text, true); got != tt.path {
			t.Errorf("Wildmatch(%q, %q, pathname) = %v, want %v", tt.pattern, tt.text, got, tt.path)
		}
	}
}

func FuzzWildmatch(f *testing.F) {
	for _, s := range []string{"*", "**/a", "[!a-z]", "[[:alpha:]]", "a\\", "[", "**", "*/**/*"} {
		f.Add(s, "a/b/c")
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		Wildmatch(pattern, text, true)
		Wildmatch(pattern, text, false)
		ip, ok := ParseLine(pattern, "")
		if ok {
			ip.Matches(text, true)
			ip.Matches(text, false)
		}
		ParseFile([]byte(pattern), "d/")
	})
}
