package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	dir := tree(t, map[string]string{
		"a.txt":    "one\ntwo\r\nthree",
		"long.txt": long.String(),
		"wide.txt": strings.Repeat("x", 2500) + "\n",
		"bin.dat":  "ab\x00cd",
		"empty":    "",
		"sub/x":    "x",
	})
	rd := tool(t, Env{WorkTree: dir}, "read")
	tests := []struct {
		name     string
		params   ReadParams
		isErr    bool
		contains []string
		absent   []string
	}{
		{"numbered", ReadParams{Path: "a.txt"}, false, []string{"     1\tone\n", "     2\ttwo\n", "     3\tthree"}, []string{"\r"}},
		{"default limit", ReadParams{Path: "long.txt"}, false, []string{"  2000\tline 2000\n", "offset=2001"}, []string{"line 2001\n"}},
		{"offset and limit", ReadParams{Path: "long.txt", Offset: 10, Limit: 2}, false, []string{"    10\tline 10\n", "    11\tline 11", "offset=12"}, []string{"line 12\n"}},
		{"past the end", ReadParams{Path: "a.txt", Offset: 9}, true, []string{"past the end", "3 lines"}, nil},
		{"long line cut", ReadParams{Path: "wide.txt"}, false, []string{"line cut", "1 long lines were cut"}, []string{strings.Repeat("x", 2001)}},
		{"binary", ReadParams{Path: "bin.dat"}, true, []string{"binary file"}, nil},
		{"empty", ReadParams{Path: "empty"}, false, []string{"empty"}, nil},
		{"missing", ReadParams{Path: "nope.txt"}, true, []string{"file not found: nope.txt", "glob"}, nil},
		{"directory", ReadParams{Path: "sub"}, true, []string{"is a directory", "list"}, nil},
		{"negative", ReadParams{Path: "a.txt", Offset: -1}, true, []string{"negative"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, rd, tt.params)
			if res.IsError != tt.isErr {
				t.Errorf("IsError = %v: %s", res.IsError, res.Output)
			}
			for _, s := range tt.contains {
				if !strings.Contains(res.Output, s) {
					t.Errorf("output lacks %q:\n%.300s", s, res.Output)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(res.Output, s) {
					t.Errorf("output has %q", s)
				}
			}
		})
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"old.txt": "old"})
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	wr := tool(t, Env{WorkTree: dir}, "write")
	res := run(t, wr, WriteParams{Path: "new/deep/f.go", Content: "package f\n"})
	if res.IsError || readFile(t, dir, "new/deep/f.go") != "package f\n" || !slices.Equal(res.Touched, []string{"new/deep/f.go"}) {
		t.Errorf("create: %+v", res)
	}
	res = run(t, wr, WriteParams{Path: "old.txt", Content: "new"})
	fi, _ := os.Stat(filepath.Join(dir, "old.txt"))
	if res.IsError || readFile(t, dir, "old.txt") != "new" || fi.Mode().Perm() != 0o755 || !strings.Contains(res.Output, "Updated") {
		t.Errorf("overwrite: %+v mode %v", res, fi.Mode())
	}
	if res := run(t, wr, WriteParams{Path: "new", Content: "x"}); !res.IsError {
		t.Errorf("writing over a directory: %+v", res)
	}
	if res, _ := wr.Run(t.Context(), Call{Input: []byte(`{"path": 1}`)}); !res.IsError {
		t.Errorf("bad JSON: %+v", res)
	}
}

func TestEdit(t *testing.T) {
	t.Parallel()
	const src = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name     string
		file     string
		params   EditParams
		isErr    bool
		want     string // file afterwards ("" = unchanged)
		contains string
	}{
		{"exact unique", src, EditParams{OldString: "func a() {\n\treturn 1", NewString: "func a() {\n\treturn 2"}, false,
			"func a() {\n\treturn 2\n}\n\nfunc b() {\n\treturn 1\n}\n", "exact match"},
		{"ambiguous", src, EditParams{OldString: "return 1", NewString: "return 2"}, true, "", "matches 2 places in f.go (lines 2, 6)"},
		{"replace all", src, EditParams{OldString: "return 1", NewString: "return 2", ReplaceAll: true}, false,
			strings.ReplaceAll(src, "return 1", "return 2"), "replaced 2"},
		{"missing", src, EditParams{OldString: "return 3", NewString: "x"}, true, "", "not found"},
		{"missing hints line", src, EditParams{OldString: "func b() {\n  return 9", NewString: "x"}, true, "", "line(s) 5"},
		{"trimmed lines", src, EditParams{OldString: "func b() {\n    return 1\n}", NewString: "func b() {\n\treturn 3\n}"}, false,
			"func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 3\n}\n", "trimmed lines"},
		{"whitespace", "x :=   f(a,\n\tb)\n", EditParams{OldString: "x := f(a, b)", NewString: "x := g()"}, false, "x := g()\n", "whitespace"},
		{"crlf", "a\r\nb\r\nc\r\n", EditParams{OldString: "a\nb", NewString: "A\nB"}, false, "A\r\nB\r\nc\r\n", "line endings"},
		{"same strings", src, EditParams{OldString: "a", NewString: "a"}, true, "", "same"},
		{"empty old on content", src, EditParams{OldString: "", NewString: "x"}, true, "", "write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"f.go": tt.file})
			tt.params.Path = "f.go"
			res := run(t, tool(t, Env{WorkTree: dir}, "edit"), tt.params)
			if res.IsError != tt.isErr || !strings.Contains(res.Output, tt.contains) {
				t.Errorf("IsError=%v output:\n%s\nwant contains %q", res.IsError, res.Output, tt.contains)
			}
			want := tt.want
			if want == "" {
				want = tt.file
			}
			if got := readFile(t, dir, "f.go"); got != want {
				t.Errorf("file = %q, want %q", got, want)
			}
			if !tt.isErr && !slices.Equal(res.Touched, []string{"f.go"}) {
				t.Errorf("Touched = %v", res.Touched)
			}
		})
	}
	dir := t.TempDir()
	res := run(t, tool(t, Env{WorkTree: dir}, "edit"), EditParams{Path: "n/new.txt", NewString: "hello"})
	if res.IsError || readFile(t, dir, "n/new.txt") != "hello" {
		t.Errorf("create with empty old_string: %+v", res)
	}
}

func TestWalkTools(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		".gitignore":         "build/\n*.log\n!keep.log\n/root-only.txt\n[!a]*.bak\n",
		"a.go":               "package main // TODO fix\n",
		"b.bak":              "ignored by [!a]",
		"a.bak":              "kept: starts with a",
		"root-only.txt":      "ignored",
		"sub/root-only.txt":  "kept: anchored pattern only at root",
		"x.log":              "TODO ignored",
		"keep.log":           "TODO kept",
		"build/out.go":       "TODO ignored dir",
		"build/keep.log":     "inside an excluded dir: stays ignored",
		"src/.gitignore":     "gen/\n",
		"src/c.go":           "package src\n// TODO src\n",
		"src/gen/g.go":       "TODO generated",
		"src/deep/d_test.go": "package deep\n",
		".git/config":        "TODO git",
		".env":               "TOKEN=TODO",
		"bin.dat":            "TODO\x00",
		"docs/readme.md":     "todo lower\n",
	})
	env := Env{WorkTree: dir}
	res := run(t, tool(t, env, "glob"), GlobParams{Pattern: "**/*.go"})
	if want := "a.go\nsrc/c.go\nsrc/deep/d_test.go"; res.Output != want {
		t.Errorf("glob **/*.go =\n%s\nwant\n%s", res.Output, want)
	}
	res = run(t, tool(t, env, "glob"), GlobParams{Pattern: "*.go", Path: "src"})
	if res.Output != "src/c.go" {
		t.Errorf("glob in src = %q", res.Output)
	}
	res = run(t, tool(t, env, "glob"), GlobParams{Pattern: "**/*"})
	for _, want := range []string{"a.bak", "keep.log", "sub/root-only.txt", ".env"} {
		if !slices.Contains(strings.Split(res.Output, "\n"), want) {
			t.Errorf("glob **/* lacks %s:\n%s", want, res.Output)
		}
	}
	for _, bad := range []string{"b.bak", "x.log", "build/", "gen/", ".git/", "\nroot-only.txt"} {
		if strings.Contains("\n"+res.Output, bad) {
			t.Errorf("glob **/* shows %s:\n%s", bad, res.Output)
		}
	}
	res = run(t, tool(t, env, "grep"), GrepParams{Pattern: "TODO"})
	if want := ".env:1: TOKEN=TODO\na.go:1: package main // TODO fix\nkeep.log:1: TODO kept\nsrc/c.go:2: // TODO src"; res.Output != want {
		t.Errorf("grep TODO =\n%s\nwant\n%s", res.Output, want)
	}
	res = run(t, tool(t, env, "grep"), GrepParams{Pattern: "(?i)todo", Include: "*.md"})
	if res.Output != "docs/readme.md:1: todo lower" {
		t.Errorf("grep include = %q", res.Output)
	}
	if res := run(t, tool(t, env, "grep"), GrepParams{Pattern: "(a"}); !res.IsError || !strings.Contains(res.Output, "RE2") {
		t.Errorf("bad regexp: %+v", res)
	}
	res = run(t, tool(t, env, "list"), ListParams{Path: "src"})
	if want := "src/\n  .gitignore\n  c.go\n  deep/\n    d_test.go"; res.Output != want {
		t.Errorf("list src =\n%s\nwant\n%s", res.Output, want)
	}
	res = run(t, tool(t, env, "grep"), GrepParams{Pattern: "ignored", Path: "build"})
	if res.Output != "build/keep.log:1: inside an excluded dir: stays ignored\nbuild/out.go:1: TODO ignored dir" {
		t.Errorf("grep in an ignored directory asked for explicitly = %q", res.Output)
	}
	if res := run(t, tool(t, env, "list"), ListParams{Path: "nope"}); !res.IsError {
		t.Errorf("list missing dir: %+v", res)
	}
	if res := run(t, tool(t, env, "glob"), GlobParams{Pattern: "*", Path: "a.go"}); !res.IsError {
		t.Errorf("glob in a file: %+v", res)
	}
}

func TestWalkBounded(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 650 {
		files[fmt.Sprintf("d/f%03d.txt", i)] = "match\n"
	}
	dir := tree(t, files)
	env := Env{WorkTree: dir}
	res := run(t, tool(t, env, "glob"), GlobParams{Pattern: "**/*.txt"})
	if !res.Truncated || strings.Count(res.Output, "\n") != maxGlobResults || !strings.Contains(res.Output, "550 more") {
		t.Errorf("glob not bounded: %d lines, %q", strings.Count(res.Output, "\n"), res.Output[len(res.Output)-80:])
	}
	res = run(t, tool(t, env, "grep"), GrepParams{Pattern: "match"})
	if !res.Truncated || strings.Count(res.Output, "\n") != maxGrepMatches {
		t.Errorf("grep not bounded: %d lines", strings.Count(res.Output, "\n"))
	}
	res = run(t, tool(t, env, "list"), ListParams{})
	if !res.Truncated || !strings.Contains(res.Output, "151 more entries") {
		t.Errorf("list not bounded: %q", res.Output[len(res.Output)-80:])
	}
}
