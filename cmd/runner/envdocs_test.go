package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envName is what an environment variable's name looks like; a trailing
// underscore marks a prefix the runner reads every variable of (OTEL_).
var envName = regexp.MustCompile(`^([A-Z][A-Z0-9]*(_[A-Z0-9]+)*_?|[a-z]+(_[a-z0-9]+)+)$`)

// envReaders are the names of the functions and methods that read a
// variable by name, as the code calls them.
var envReaders = []string{"getenv", "lookupenv", "env", "get", "lookup"}

// envMaps are the names of the maps of the environment the code indexes.
var envMaps = []string{"environ", "env", "envmap"}

// envVarsReadByCode finds the names of the environment variables the
// runner's own (non-test) code reads: literals passed to a getenv-like
// call, used as a key of an environment map, or declared as a constant
// whose name ends in Env or EnvVar.
func envVarsReadByCode(t *testing.T, root string) []string {
	t.Helper()
	found := map[string]bool{}
	add := func(e ast.Expr) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return
		}
		s, err := strconv.Unquote(lit.Value)
		if err == nil && envName.MatchString(s) && len(s) > 2 {
			found[s] = true
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "testdata" || name == "third_party" || name == "e2e" || strings.HasPrefix(name, ".") && path != root ||
				strings.HasSuffix(name, "test") && name != "test" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				var fn string
				switch f := n.Fun.(type) {
				case *ast.Ident:
					fn = f.Name
				case *ast.SelectorExpr:
					fn = f.Sel.Name
				}
				if len(n.Args) > 0 && slices.Contains(envReaders, strings.ToLower(fn)) {
					add(n.Args[0])
				}
			case *ast.IndexExpr:
				var m string
				switch x := n.X.(type) {
				case *ast.Ident:
					m = x.Name
				case *ast.SelectorExpr:
					m = x.Sel.Name
				}
				if slices.Contains(envMaps, strings.ToLower(m)) {
					add(n.Index)
				}
			case *ast.Field:
				if n.Tag == nil {
					return true
				}
				tag, err := strconv.Unquote(n.Tag.Value)
				if err != nil {
					return true
				}
				if v, ok := reflect.StructTag(tag).Lookup("env"); ok {
					for _, name := range strings.Split(v, ",") {
						add(&ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(name)})
					}
				}
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if (strings.HasSuffix(id.Name, "Env") || strings.HasSuffix(id.Name, "EnvVar")) && i < len(n.Values) {
						add(n.Values[i])
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range found {
			if !yield(k) {
				return
			}
		}
	})
}

// TestEnvironmentDocumented: every environment variable the code reads has
// a row in docs/environment.md's table, and every row names one it reads.
func TestEnvironmentDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/environment.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| (`[^|]+`) \\|").FindAllStringSubmatch(string(data), -1) {
		for _, n := range regexp.MustCompile("`([A-Za-z0-9_]+)\\*?`").FindAllStringSubmatch(m[1], -1) {
			rows[n[1]] = true
		}
	}
	read := envVarsReadByCode(t, "../..")
	for _, v := range read {
		if !rows[v] {
			t.Errorf("the code reads $%s, which docs/environment.md does not list: add a row", v)
		}
	}
	if len(read) < 30 {
		t.Errorf("found only %d variables read by the code: the scanner has lost track of how the code reads them", len(read))
	}
}
