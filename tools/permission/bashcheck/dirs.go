package bashcheck

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// unknownDir stands in a dirSet for a directory only known at run time
// (cd $D, cd -, a bare cd to $HOME).
const unknownDir = ""

// unplacedDir says, in a denial, why a directory is unknownDir.
const unplacedDir = "a directory the check cannot place (one that does not exist yet, or is only known at run time: cd $D, cd -, popd)"

// maxLoopPasses bounds the passes over a loop body before the directories
// it may reach are given up as unknown (while true; do cd sub; done).
const maxLoopPasses = 4

// dirSet is the set of absolute, symlink-free directories a command may
// run in; unknownDir marks one that cannot be placed.
type dirSet map[string]bool

func union(sets ...dirSet) dirSet {
	out := dirSet{}
	for _, s := range sets {
		for d := range s {
			out[d] = true
		}
	}
	return out
}

func (s dirSet) sameAs(o dirSet) bool {
	if len(s) != len(o) {
		return false
	}
	for d := range s {
		if !o[d] {
			return false
		}
	}
	return true
}

// sorted lists the directories in a stable order.
func (s dirSet) sorted() []string {
	out := make([]string, 0, len(s))
	for d := range s {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// dirFlow computes, before the checks, the directories every simple
// command and statement of a script may run in, following cd, pushd and
// popd through lists, && and ||, pipelines, subshells and loops. It
// over-approximates: a cd that may fail leaves the old directory possible
// (`cd x; cat ../y` is judged from both), a cd in a subshell or pipeline
// does not leak out, and only `cd T && …` drops the old directory.
type dirFlow struct {
	paths permission.Paths
	at    map[syntax.Node]dirSet
	seen  dirSet // every directory reached so far (popd returns to one)
	// olds holds every directory a cd or pushd left so far ($OLDPWD, where
	// `cd -` returns); moved is set once one ran. dash records where each
	// `cd -` may land.
	olds  dirSet
	moved bool
	dash  map[syntax.Node]dirSet
}

// flowDirs computes the directories of f's commands, starting where the
// script starts (a.dirs, else the work tree's root).
func (a *analyzer) flowDirs(f *syntax.File) {
	if a.pathsErr != nil {
		return
	}
	if a.at == nil {
		a.at = map[syntax.Node]dirSet{}
	}
	start := a.dirs
	if len(start) == 0 {
		start = dirSet{a.paths.Root(): true}
	}
	if a.dash == nil {
		a.dash = map[syntax.Node]dirSet{}
	}
	flow := newDirFlow(a.paths, a.at)
	flow.dash = a.dash
	flow.stmts(f.Stmts, start)
}

func newDirFlow(p permission.Paths, at map[syntax.Node]dirSet) *dirFlow {
	return &dirFlow{paths: p, at: at, seen: dirSet{}, olds: dirSet{}, dash: map[syntax.Node]dirSet{}}
}

func (f *dirFlow) record(n syntax.Node, in dirSet) {
	f.at[n] = union(f.at[n], in)
	f.seen = union(f.seen, in)
}

// stmts runs a list; ok and fail are the directories after it succeeded
// or failed.
func (f *dirFlow) stmts(list []*syntax.Stmt, in dirSet) (ok, fail dirSet) {
	ok, fail = in, dirSet{}
	cur := in
	for _, st := range list {
		ok, fail = f.stmt(st, cur)
		cur = union(ok, fail)
	}
	return ok, fail
}

func (f *dirFlow) stmt(st *syntax.Stmt, in dirSet) (ok, fail dirSet) {
	f.record(st, in)
	for _, r := range st.Redirs {
		f.substs(r, in)
	}
	if st.Cmd == nil {
		return in, in
	}
	ok, fail = f.command(st.Cmd, in)
	if st.Background || st.Coprocess || st.Disown {
		return in, in // runs in a subshell
	}
	if st.Negated {
		ok, fail = fail, ok
	}
	return ok, fail
}

func (f *dirFlow) command(c syntax.Command, in dirSet) (ok, fail dirSet) {
	switch c := c.(type) {
	case *syntax.CallExpr:
		f.record(c, in)
		f.substs(c, in)
		return f.callEffect(c, in)
	case *syntax.BinaryCmd:
		return f.binary(c, in)
	case *syntax.Subshell:
		f.stmts(c.Stmts, in)
		return in, in
	case *syntax.Block:
		return f.stmts(c.Stmts, in)
	case *syntax.IfClause:
		return f.ifClause(c, in)
	case *syntax.WhileClause:
		return f.loop(in, func(s dirSet) dirSet {
			cok, cfail := f.stmts(c.Cond, s)
			body := cok
			if c.Until {
				body = cfail
			}
			bok, bfail := f.stmts(c.Do, body)
			return union(cok, cfail, bok, bfail)
		})
	case *syntax.ForClause:
		f.substs(c.Loop, in)
		return f.loop(in, func(s dirSet) dirSet {
			bok, bfail := f.stmts(c.Do, s)
			return union(bok, bfail)
		})
	case *syntax.CaseClause:
		f.substs(c.Word, in)
		cur := in
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				f.substs(p, in)
			}
			iok, ifail := f.stmts(item.Stmts, cur) // ;& falls through: carry the state on
			cur = union(cur, iok, ifail)
		}
		return cur, cur
	case *syntax.TimeClause:
		if c.Stmt != nil {
			return f.stmt(c.Stmt, in)
		}
	case *syntax.CoprocClause:
		f.stmt(c.Stmt, in)
	case *syntax.FuncDecl:
		if c.Body != nil {
			f.stmt(c.Body, in)
		}
	default: // arithmetic, tests, declarations: no directory change
		f.record(c, in)
		f.substs(c, in)
	}
	return in, in
}

func (f *dirFlow) binary(c *syntax.BinaryCmd, in dirSet) (ok, fail dirSet) {
	switch c.Op {
	case syntax.AndStmt:
		xok, xfail := f.stmt(c.X, in)
		yok, yfail := f.stmt(c.Y, xok)
		return yok, union(xfail, yfail)
	case syntax.OrStmt:
		xok, xfail := f.stmt(c.X, in)
		yok, yfail := f.stmt(c.Y, xfail)
		return union(xok, yok), yfail
	}
	// a pipeline: every member runs in a subshell, the last one in the
	// shell itself under shopt lastpipe
	f.stmt(c.X, in)
	yok, yfail := f.stmt(c.Y, in)
	out := union(in, yok, yfail)
	return out, out
}

func (f *dirFlow) ifClause(c *syntax.IfClause, in dirSet) (ok, fail dirSet) {
	if len(c.Cond) == 0 && !c.ThenPos.IsValid() { // a plain else
		return f.stmts(c.Then, in)
	}
	cok, cfail := f.stmts(c.Cond, in)
	tok, tfail := f.stmts(c.Then, cok)
	if c.Else == nil {
		return union(tok, cfail), tfail
	}
	eok, efail := f.ifClause(c.Else, cfail)
	return union(tok, eok), union(tfail, efail)
}

// loop runs a loop body until the directories it may start in stop
// growing; beyond maxLoopPasses they are given up as unknown.
func (f *dirFlow) loop(in dirSet, pass func(dirSet) dirSet) (ok, fail dirSet) {
	s := in
	for i := 0; i < maxLoopPasses; i++ {
		next := union(s, pass(s))
		if next.sameAs(s) {
			return s, s
		}
		s = next
	}
	s = union(s, dirSet{unknownDir: true})
	pass(s)
	return s, s
}

// substs follows the command and process substitutions inside n: they
// run in a subshell started from the current directory.
func (f *dirFlow) substs(n syntax.Node, in dirSet) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			f.stmts(n.Stmts, in)
			return false
		case *syntax.ProcSubst:
			f.stmts(n.Stmts, in)
			return false
		}
		return true
	})
}

// callEffect is the directory change a simple command makes: cd and pushd
// (also behind builtin or command) move to their operand, popd returns to
// a directory seen before. A change that fails leaves the old directory.
func (f *dirFlow) callEffect(c *syntax.CallExpr, in dirSet) (ok, fail dirSet) {
	args := make([]word, 0, len(c.Args))
	for _, w := range c.Args {
		if split := *w; syntax.SplitBraces(&split) {
			return dirSet{unknownDir: true}, in // cd {a,b}: the operands are only known once expanded
		}
		args = append(args, convertWord(w))
	}
	for len(args) > 1 && args[0].static() && (args[0].lit() == "builtin" || args[0].lit() == "command") {
		args = args[1:]
	}
	if len(args) == 0 || !args[0].static() {
		return in, in
	}
	switch args[0].lit() {
	case "cd", "pushd":
	case "popd":
		return union(f.seen, in), in
	default:
		return in, in
	}
	ops := cdOperands(args[1:])
	defer func() { f.olds, f.moved = union(f.olds, in), true }()
	switch {
	case len(ops) == 1 && ops[0].static() && ops[0].lit() == "-" && args[0].lit() == "cd":
		ok = dirSet{unknownDir: true} // $OLDPWD from the environment
		if f.moved {
			ok = union(f.olds)
		}
		f.dash[c] = union(f.dash[c], ok)
		return ok, in
	case len(ops) != 1 || !ops[0].static() || strings.HasPrefix(ops[0].lit(), "~") || strings.HasPrefix(ops[0].lit(), "-"):
		return dirSet{unknownDir: true}, in
	}
	ok = dirSet{}
	for d := range in {
		ok[f.changeTo(d, ops[0].lit())] = true
	}
	return ok, in
}

// changeTo is where `cd op` from dir lands: unknownDir when op is not an
// existing directory there, since bash then looks elsewhere (CDPATH, and
// the variable named op under shopt cdable_vars) or the cd fails.
func (f *dirFlow) changeTo(dir, op string) string {
	if dir == unknownDir && !filepath.IsAbs(op) {
		return unknownDir
	}
	name := op
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	t, err := f.paths.Resolve(name)
	if err != nil {
		return unknownDir
	}
	if fi, err := os.Stat(t.Abs); err != nil || !fi.IsDir() {
		return unknownDir
	}
	return t.Abs
}

// cdOperands skips cd's options (-L, -P, -e, -@, --).
func cdOperands(ws []word) []word {
	for len(ws) > 0 && ws[0].static() && strings.HasPrefix(ws[0].lit(), "-") && ws[0].lit() != "-" {
		done := ws[0].lit() == "--"
		ws = ws[1:]
		if done {
			break
		}
	}
	return ws
}
