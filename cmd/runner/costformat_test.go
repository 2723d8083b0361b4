package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOneCostFormat: every output shows a cost through event.FormatCost;
// a format string of its own ("$%.2f") in any other non-test file would
// show the same cost as another figure ($0.00 beside $0.0008).
func TestOneCostFormat(t *testing.T) {
	t.Parallel()
	dollars := regexp.MustCompile(`\$%\.(\d+|\*)f`)
	const home = "runner/event/console_format.go"
	found := 0
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", p)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && dollars.MatchString(s) {
				if filepath.ToSlash(rel) == home {
					found++
				} else {
					t.Errorf("%s formats a cost itself (%q): use event.FormatCost", rel, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Errorf("no cost format found in %s: the test no longer sees event.FormatCost", home)
	}
}
