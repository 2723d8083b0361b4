package permission

import (
	"errors"
	"testing"
)

func TestEvaluate(t *testing.T) {
	t.Parallel()
	rs := Ruleset{
		{Bash, "go test *", Allow}, {Bash, "git *", Allow}, {Bash, "git push*", Deny},
		{Edit, "**", Allow}, {Edit, ".github/**", Deny}, {Read, "*", Allow},
		{WebFetch, "https://go.dev/*", Allow},
	}
	tests := []struct {
		perm, pattern string
		want          bool
		rule          string // "" for default deny
	}{
		{Bash, "go test", true, `bash "go test *": allow`},
		{Bash, "go test ./...", true, `bash "go test *": allow`},
		{Bash, "go testx", false, ""},
		{Bash, "git push origin", false, `bash "git push*": deny`},
		{Bash, "git status", true, `bash "git *": allow`},
		{Bash, "git", true, `bash "git *": allow`},
		{Edit, "a/b/c.go", true, `edit "**": allow`},
		{Edit, ".github/workflows/ci.yml", false, `edit ".github/**": deny`},
		{Read, "deep/path/x", true, `read "*": allow`},
		{WebFetch, "https://go.dev/doc/x", true, `webfetch "https://go.dev/*": allow`},
		{DoomLoop, "read", false, ""},
	}
	for _, tt := range tests {
		d := rs.Evaluate(tt.perm, tt.pattern)
		rule := ""
		if d.Rule != nil {
			rule = d.Rule.String()
		}
		if d.Allowed != tt.want || rule != tt.rule || d.Reason == "" || d.Permission != tt.perm || d.Pattern != tt.pattern {
			t.Errorf("Evaluate(%s, %q) = %+v (rule %q), want %v %q", tt.perm, tt.pattern, d, rule, tt.want, tt.rule)
		}
	}
}

func TestWildcards(t *testing.T) {
	t.Parallel()
	s := func(parts ...string) []rune {
		var out []rune
		for _, p := range parts {
			if p == "$" {
				out = append(out, Hole)
				continue
			}
			out = append(out, []rune(p)...)
		}
		return out
	}
	tests := []struct {
		pattern   string
		subject   []rune
		all, some bool
	}{
		{"cat *", s("cat ", "$"), true, true},
		{"cat *", s("cat"), true, true},
		{"cat x", s("cat ", "$"), false, true},
		{"rm *", s("$", " -rf"), false, true},
		{"git status", s("git status"), true, true},
		{"git status", s("git status", "$"), false, true},
		{"a?c", s("abc"), true, true},
		{"a?c", s("a", "$", "c"), false, true},
		{"x*y*z", s("x", "$", "q", "$", "z"), false, true},
		{"x*y*z", s("x", "q", "z"), false, false},
		{"x*y*z", s("x", "$", "y", "$", "z"), true, true},
		{"*", s("$"), true, true},
		{"", s(""), true, true},
		{"", s("$"), false, true},
	}
	for _, tt := range tests {
		if got := MatchAll(tt.pattern, tt.subject); got != tt.all {
			t.Errorf("MatchAll(%q, %q) = %v", tt.pattern, string(tt.subject), got)
		}
		if got := MatchSome(tt.pattern, tt.subject); got != tt.some {
			t.Errorf("MatchSome(%q, %q) = %v", tt.pattern, string(tt.subject), got)
		}
	}
}

func TestFromSpec(t *testing.T) {
	t.Parallel()
	rs, err := FromSpec(map[string]any{
		"read": "allow",
		"edit": map[string]any{"**": "allow", ".github/**": "deny"},
		"bash": map[any]any{"go test *": "allow"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`bash "go test *": allow`, `edit "**": allow`, `edit ".github/**": deny`, `read "*": allow`}
	if len(rs) != len(want) {
		t.Fatalf("rules = %v", rs)
	}
	for i, w := range want {
		if rs[i].String() != w {
			t.Errorf("rule %d = %s, want %s", i, rs[i], w)
		}
	}
	bad := []struct {
		spec map[string]any
		err  error
	}{
		{map[string]any{"read": "ask"}, ErrAsk},
		{map[string]any{"edit": map[string]any{"**": "ask"}}, ErrAsk},
		{map[string]any{"read": "yes"}, ErrUnknownAction},
		{map[string]any{"read": 1}, ErrBadSpec},
		{map[string]any{"read": map[string]any{"**": true}}, ErrBadSpec},
		{map[string]any{"read": map[string]any{"": "allow"}}, ErrBadSpec},
	}
	for _, b := range bad {
		if _, err := FromSpec(b.spec); !errors.Is(err, b.err) {
			t.Errorf("FromSpec(%v) = %v, want %v", b.spec, err, b.err)
		}
	}
}
