package bashcheck

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Arithmetic evaluation runs code: bash evaluates the value of every
// variable an expression names as an expression in turn, and a value such
// as a[$(cmd)] runs cmd (as do the $(…) inside '…' within $(( )), where
// single quotes do not quote). The contexts: (( )), $(( )), $[ ], let,
// for (( ; ; )), array subscripts, ${v:offset:length} and the operands of
// [[ -eq ]] and the other arithmetic tests.

// arithContexts returns the arithmetic expressions n holds directly.
func arithContexts(n syntax.Node) []syntax.Node {
	var out []syntax.Node
	add := func(e syntax.Node) {
		if e != nil {
			out = append(out, e)
		}
	}
	switch n := n.(type) {
	case *syntax.ArithmExp:
		add(n.X)
	case *syntax.ArithmCmd:
		add(n.X)
	case *syntax.LetClause:
		for _, e := range n.Exprs {
			add(e)
		}
	case *syntax.CStyleLoop:
		add(n.Init)
		add(n.Cond)
		add(n.Post)
	case *syntax.ParamExp:
		if n.Index != nil && !isAllIndex(n.Index) {
			add(n.Index)
		}
		if n.Slice != nil {
			add(n.Slice.Offset)
			add(n.Slice.Length)
		}
	case *syntax.Assign:
		if n.Index != nil {
			add(n.Index)
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			add(testOperand(n.X))
			add(testOperand(n.Y))
		}
	}
	return out
}

// arithProblem explains why the arithmetic expression e cannot be judged:
// it names a variable whose value is not a number this script sets (its
// value is evaluated as code), it evaluates a command's output, or it holds
// quoted text with code in it; "" when every operand is a number.
func (a *analyzer) arithProblem(e syntax.Node) string {
	why := ""
	syntax.Walk(e, func(n syntax.Node) bool {
		if why != "" || n == nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			why = fmt.Sprintf("arithmetic evaluates the output of %s as an expression, and one such as a[$(cmd)] runs cmd", nodeText(n))
			return false
		case *syntax.SglQuoted:
			if holdsCode(n.Value) {
				why = fmt.Sprintf("inside arithmetic single quotes do not quote: bash runs the code in %s", nodeText(n))
			}
			return false
		case *syntax.Lit:
			if isAssignment(n.Value+"=") && !numericParam(n.Value) {
				why = a.arithVar(n.Value)
			}
		case *syntax.ParamExp:
			why = a.arithParam(n)
			// the subscript and offsets are arithmetic contexts of their own
			return false
		}
		return true
	})
	return why
}

// arithParam judges $x, ${x}, ${#x} and a[i] inside arithmetic.
func (a *analyzer) arithParam(pe *syntax.ParamExp) string {
	if pe.Length || pe.Width || pe.Param == nil || numericParam(pe.Param.Value) {
		return ""
	}
	if pe.Exp != nil || pe.Repl != nil || pe.Excl || pe.NestedParam != nil || len(pe.Modifiers) > 0 {
		return fmt.Sprintf("arithmetic evaluates the value of %s, which is only known at run time; "+
			"a value such as a[$(cmd)] runs cmd", nodeText(pe))
	}
	return a.arithVar(pe.Param.Value)
}

// arithVar explains why arithmetic on variable name cannot be judged; ""
// when every value the script gives it is static text without code (a
// number, or a name) and it is not read from the environment.
func (a *analyzer) arithVar(name string) string {
	f := a.vars[name]
	switch {
	case f == nil:
		return fmt.Sprintf("arithmetic evaluates the value of %s, which this command does not set (it comes from "+
			"the environment); a value such as a[$(cmd)] runs cmd", name)
	case f.unknown != "":
		return fmt.Sprintf("arithmetic evaluates the value of %s, which is %s, only known at run time; "+
			"a value such as a[$(cmd)] runs cmd", name, strings.TrimPrefix(f.unknown, "the "))
	}
	for _, v := range f.values {
		if !v.static() || holdsCode(v.lit()) || strings.ContainsAny(v.lit(), "[]") {
			return fmt.Sprintf("arithmetic evaluates the value of %s, which may be %s (from %s): bash would run the code in it",
				name, displayValue(v), f.origin)
		}
	}
	return ""
}

// testOperand is the word of a [[ ]] operand, nil for a nested test.
func testOperand(e syntax.TestExpr) syntax.Node {
	if w, ok := e.(*syntax.Word); ok {
		return w
	}
	return nil
}
