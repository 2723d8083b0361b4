package bashcheck

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// varFact is what one script assigns to a variable, by any route,
// anywhere in it (flow-insensitive: the order of statements is ignored,
// which over-approximates).
type varFact struct {
	values  []word // the values assigned statically (after quote removal; globs are holes)
	unknown string // non-empty: a route assigns a value only known at run time (the construct)
	origin  string // the first assignment, for explanations
	integer bool   // declared -i: assigned values are evaluated as arithmetic
}

// varFacts maps variable names to what the script assigns them.
type varFacts map[string]*varFact

func (vs varFacts) fact(name, origin string) *varFact {
	f := vs[name]
	if f == nil {
		f = &varFact{origin: origin}
		vs[name] = f
	}
	return f
}

func (vs varFacts) known(name, origin string, v word) {
	f := vs.fact(name, origin)
	if !v.static() && v.unknown != "" {
		f.markUnknown(v.text)
		return
	}
	f.values = append(f.values, v)
}

func (vs varFacts) unknownValue(name, origin, why string) { vs.fact(name, origin).markUnknown(why) }

func (f *varFact) markUnknown(why string) {
	if f.unknown == "" {
		f.unknown = why
	}
}

// assignment is one way the script sets a variable that needs no rule of
// its own (a for loop, arithmetic, ${NAME:=…}); dangerous names set this
// way are denied (guardRoutes).
type assignment struct {
	name, route, text string
}

// collectVars finds every assignment in f: NAME=value (prefix, alone or in
// declare/export/local), for/select loop names, arithmetic (x=…, x++),
// ${NAME:=…} and ${NAME=…}, and the builtins that read values into names
// (read, mapfile, getopts, printf -v, wait -p). Nested `sh -c` scripts are
// other shells and are not looked into.
func collectVars(f *syntax.File) (varFacts, []assignment) {
	vs := varFacts{}
	var routes []assignment
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			collectAssign(vs, n)
		case *syntax.ForClause:
			routes = append(routes, collectLoop(vs, n)...)
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			routes = append(routes, arithAssigns(vs, n)...)
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && n.Param != nil {
				text := "${" + n.Param.Value + n.Exp.Op.String() + "…}"
				routes = append(routes, assignment{n.Param.Value, "${" + n.Param.Value + n.Exp.Op.String() + "…}", text})
				if n.Exp.Word == nil {
					vs.known(n.Param.Value, text, litWord(""))
				} else {
					vs.known(n.Param.Value, text, convertWord(n.Exp.Word))
				}
			}
		case *syntax.CallExpr:
			collectReads(vs, n)
		case *syntax.DeclClause:
			collectIntegers(vs, n)
		}
		return true
	})
	return vs, routes
}

// collectIntegers marks the names declare/local/typeset -i gives the
// integer attribute: every value assigned to them is evaluated as
// arithmetic (n=$(cat f) runs the code in the file).
func collectIntegers(vs varFacts, dc *syntax.DeclClause) {
	integer := false
	for _, as := range dc.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			if l := as.Value.Lit(); strings.HasPrefix(l, "-") && strings.ContainsRune(l, 'i') {
				integer = true
			}
			continue
		}
		if integer && as.Name != nil {
			vs.fact(as.Name.Value, nodeText(dc)).integer = true
		}
	}
}

// collectAssign records NAME=value; arrays and indexed elements hold
// values the check does not follow.
func collectAssign(vs varFacts, as *syntax.Assign) {
	if as.Name == nil {
		return
	}
	text := as.Name.Value + "=…" // nodeText is costly: a short form for explanations
	switch {
	case as.Array != nil, as.Index != nil, as.Append:
		vs.unknownValue(as.Name.Value, text, "an array or appended value")
	case as.Naked:
		// declare NAME: keeps the value it has
	case as.Value == nil:
		vs.known(as.Name.Value, text, litWord(""))
	default:
		vs.known(as.Name.Value, text, convertWord(as.Value))
	}
}

// collectLoop records `for NAME in WORDS` and `select NAME in WORDS`: NAME
// takes each word (brace-expanded). A C-style for is arithmetic.
func collectLoop(vs varFacts, fc *syntax.ForClause) []assignment {
	switch l := fc.Loop.(type) {
	case *syntax.WordIter:
		route := "for"
		if fc.Select {
			route = "select"
		}
		text := route + " " + l.Name.Value + " in …"
		if !l.InPos.IsValid() {
			vs.unknownValue(l.Name.Value, text, "the positional parameters")
		}
		for _, item := range l.Items {
			alts, why := (&analyzer{}).expandWord(item)
			if why != "" {
				vs.unknownValue(l.Name.Value, text, nodeText(item))
				continue
			}
			for _, v := range alts {
				if fc.Select {
					v.unknown = "the line select reads"
				}
				vs.known(l.Name.Value, text, v)
			}
		}
		return []assignment{{l.Name.Value, route, route + " " + l.Name.Value}}
	case *syntax.CStyleLoop:
		return arithAssigns(vs, l)
	}
	return nil
}

// arithAssigns records the variables arithmetic assigns (x=…, x+=…, x++):
// their values are numbers.
func arithAssigns(vs varFacts, n syntax.Node) []assignment {
	var out []assignment
	syntax.Walk(n, func(n syntax.Node) bool {
		var target syntax.ArithmExpr
		switch e := n.(type) {
		case *syntax.BinaryArithm:
			if e.Op >= syntax.Assgn && e.Op <= syntax.ShrAssgn {
				target = e.X
			}
		case *syntax.UnaryArithm:
			if e.Op == syntax.Inc || e.Op == syntax.Dec {
				target = e.X
			}
		}
		if name := arithName(target); name != "" {
			text := nodeText(n)
			vs.known(name, text, litWord("0"))
			out = append(out, assignment{name, "arithmetic", text})
		}
		return true
	})
	return out
}

// arithName is the variable an arithmetic operand names ("x", "a[i]" → a).
func arithName(e syntax.ArithmExpr) string {
	w, ok := e.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if isAssignment(p.Value + "=") {
			return p.Value
		}
	case *syntax.ParamExp:
		if p.Param != nil {
			return p.Param.Value
		}
	}
	return ""
}

// collectReads records the names read, mapfile, getopts, printf -v and
// wait -p set from input: their values are only known at run time.
func collectReads(vs varFacts, ce *syntax.CallExpr) {
	if len(ce.Args) == 0 {
		return
	}
	args := make([]word, len(ce.Args))
	for i, w := range ce.Args {
		args[i] = convertWord(w)
	}
	if !args[0].static() {
		return
	}
	text := args[0].lit() + " …"
	for _, name := range readNames(args[0].lit(), args[1:]) {
		vs.unknownValue(name, text, "what "+args[0].lit()+" reads")
	}
}

// readNames lists the variables a builtin sets from its input.
func readNames(prog string, args []word) []string {
	var names []string
	valued := map[string]string{"read": "adinptu", "mapfile": "dnOsuC", "readarray": "dnOsuC"}[prog]
	switch prog {
	case "read", "mapfile", "readarray":
		for i := 0; i < len(args); i++ {
			s := args[i].lit()
			if strings.HasPrefix(s, "-") && len(s) > 1 {
				for j, c := range s[1:] {
					if strings.ContainsRune(valued, c) {
						if c == 'a' && j == len(s)-2 && i+1 < len(args) {
							names = append(names, args[i+1].lit())
						}
						if j == len(s)-2 {
							i++
						}
						break
					}
				}
				continue
			}
			names = append(names, s)
		}
		switch {
		case len(names) > 0:
		case prog == "read":
			names = []string{"REPLY"}
		default:
			names = []string{"MAPFILE"}
		}
	case "getopts":
		if len(args) > 1 {
			names = append(names, args[1].lit(), "OPTARG")
		}
	case "printf", "wait":
		for i := 0; i+1 < len(args); i++ {
			if l := args[i].lit(); l == "-v" || l == "-p" {
				names = append(names, args[i+1].lit())
			}
		}
	}
	for i, n := range names {
		if open := strings.IndexByte(n, '['); open > 0 {
			names[i] = n[:open]
		}
	}
	return names
}

// guardRoutes denies dangerous variables set by a route that needs no rule
// (for PATH in …, (( IFS=1 )), ${CDPATH:=/etc}): they change what later
// commands do however they are set.
func (a *analyzer) guardRoutes(routes []assignment) {
	for _, r := range routes {
		if why := dangerousName(r.name); why != "" {
			a.unjudgeable(r.text, fmt.Sprintf("%s assigns %s, which %s", r.route, r.name, why))
		}
	}
}

// dangerousName says what assigning name changes, "" for a plain variable.
func dangerousName(name string) string {
	switch classifyVar(name) {
	case varHook:
		return "makes the shell or programs load or run code"
	case varPrompt:
		return "is expanded again when shown, running command substitutions"
	case varScript:
		return "holds a command line a program runs"
	case varGuard:
		return guardWhy(name)
	}
	return ""
}
