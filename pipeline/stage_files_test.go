package pipeline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestStageFiles: every stage listed in exec.go is a method of execRun
// declared in stage_<name>.go (a dash in the name is an underscore), so a
// reader finds a stage's code by its name.
func TestStageFiles(t *testing.T) {
	fset := token.NewFileSet()
	pkgFiles := map[string]*ast.File{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	declaredIn := map[string]string{} // execRun method -> file
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkgFiles[name] = f
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && recvIs(fd.Recv, "execRun") {
				declaredIn[fd.Name.Name] = name
			}
		}
	}
	checked := 0
	ast.Inspect(pkgFiles["exec.go"], func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || len(lit.Elts) < 2 {
			return true
		}
		if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "stageFunc" {
			return true
		}
		name := strings.Trim(lit.Elts[0].(*ast.BasicLit).Value, `"`)
		method := stageMethod(lit.Elts[1])
		if method == "" {
			t.Errorf("stage %q: no execRun method found in its entry", name)
			return false
		}
		want := "stage_" + strings.ReplaceAll(name, "-", "_") + ".go"
		if got := declaredIn[method]; got != want {
			t.Errorf("stage %q runs %s, declared in %s; move it to %s", name, method, got, want)
		}
		checked++
		return false
	})
	if checked < 30 {
		t.Errorf("checked only %d stages of exec.go's lists", checked)
	}
}

// recvIs reports whether a method's receiver is typ or *typ.
func recvIs(recv *ast.FieldList, typ string) bool {
	x := recv.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	id, ok := x.(*ast.Ident)
	return ok && id.Name == typ
}

// stageMethod is the execRun method a stage entry runs: r.method itself,
// or the one method a wrapping func literal calls.
func stageMethod(e ast.Expr) string {
	method := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && method == "" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "r" {
				method = sel.Sel.Name
			}
		}
		return method == ""
	})
	return method
}
