package permission

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxSymlinks bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinks = 40

// Paths resolves tool paths against one work tree. The zero value is not
// usable; build it with NewPaths.
type Paths struct {
	root string // the work tree: absolute, cleaned, symlinks resolved
	// fold is set when the work tree's file system folds case (macOS,
	// Windows): .GITHUB/x is .github/x there, so rules match without case.
	fold bool
}

// Target is a path after resolution.
type Target struct {
	// Abs is the absolute path with every symlink resolved: the file a tool
	// must open (never the raw input, which may take another route).
	Abs string `json:"abs"`
	// Rel is the work-tree-relative slash path ("." for the root); empty
	// when the path is outside the work tree.
	Rel string `json:"rel,omitempty"`
	// Inside reports whether the path is inside the work tree.
	Inside bool `json:"inside"`
}

// Pattern is what rules match: Rel inside the work tree, else Abs as a
// slash path.
func (t Target) Pattern() string {
	if t.Inside {
		return t.Rel
	}
	return filepath.ToSlash(t.Abs)
}

// NewPaths makes a resolver for workTree, which must exist.
func NewPaths(workTree string) (Paths, error) {
	abs, err := filepath.Abs(workTree)
	if err != nil {
		return Paths{}, fmt.Errorf("work tree %s: %w", workTree, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Paths{}, fmt.Errorf("work tree %s: %w", workTree, err)
	}
	return Paths{root: real, fold: caseFolds(real)}, nil
}

// FoldsCase reports whether the work tree's file system folds case (then
// rules match paths without regard to case).
func (p Paths) FoldsCase() bool { return p.fold }

// caseFolds reports whether dir's file system finds a name under another
// case: an entry of dir (else dir itself) whose name has a letter is
// looked up with its case flipped, and is the same file.
func caseFolds(dir string) bool {
	var probes []string
	if d, err := os.Open(dir); err == nil {
		names, _ := d.Readdirnames(8)
		d.Close()
		for _, n := range names {
			probes = append(probes, filepath.Join(dir, n))
		}
	}
	for p := dir; p != filepath.Dir(p); p = filepath.Dir(p) {
		probes = append(probes, p)
	}
	for _, p := range probes {
		base := filepath.Base(p)
		flipped := flipCase(base)
		if flipped == base {
			continue
		}
		a, errA := os.Stat(p)
		b, errB := os.Stat(filepath.Join(filepath.Dir(p), flipped))
		return errA == nil && errB == nil && os.SameFile(a, b)
	}
	return false
}

// flipCase swaps the case of every ASCII letter of s.
func flipCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// rulesFor is rs as it applies to this work tree: on a file system that
// folds case, path rules and the path are lower-cased.
func (p Paths) rulesFor(rs Ruleset, pattern string) (Ruleset, string) {
	if !p.fold {
		return rs, pattern
	}
	out := make(Ruleset, len(rs))
	for i, r := range rs {
		if isPathPermission(r.Permission) {
			r.Pattern = strings.ToLower(r.Pattern)
		}
		out[i] = r
	}
	return out, strings.ToLower(pattern)
}

// Root is the work tree's absolute, symlink-free path.
func (p Paths) Root() string { return p.root }

// Resolve places name in the work tree (when relative) and resolves it
// component by component as the kernel does: every symlink on the way,
// including a dangling one at the end, and each ".." from where the
// components before it led (link/../x climbs from the link's target). It
// reports where the result lies. Errors: ErrEmptyPath, ErrNULByte,
// ErrSymlinkLoop.
func (p Paths) Resolve(name string) (Target, error) {
	if strings.TrimSpace(name) == "" {
		return Target{}, ErrEmptyPath
	}
	if strings.IndexByte(name, 0) >= 0 {
		return Target{}, ErrNULByte
	}
	real, err := resolveSymlinks(JoinRaw(p.root, name))
	if err != nil {
		return Target{}, fmt.Errorf("resolve %s: %w", name, err)
	}
	t := Target{Abs: real}
	if rel, ok := within(p.root, real); ok {
		t.Rel, t.Inside = rel, true
	}
	return t, nil
}

// JoinRaw is name placed in dir without cleaning it: ".." after a
// symlink must climb from the link's target, as the kernel does, so only
// resolution may remove it (link/../x is not x).
func JoinRaw(dir, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return dir + string(filepath.Separator) + name
}

// within returns the slash path of target relative to root when target is
// root or below it.
func within(root, target string) (string, bool) {
	if target == root {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	rest, ok := strings.CutPrefix(target, prefix)
	if !ok {
		return "", false
	}
	return filepath.ToSlash(rest), true
}

// resolveSymlinks walks an absolute, cleaned path one component at a time,
// replacing each symlink with its target. Components that do not exist are
// kept as they are (a file about to be created). Unlike
// filepath.EvalSymlinks it also follows a dangling final symlink, since
// writing through it would create its target.
func resolveSymlinks(abs string) (string, error) {
	todo := splitPath(abs)
	cur := string(filepath.Separator)
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			// missing, unreadable or a plain entry: keep it as written
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinks {
			return "", ErrSymlinkLoop
		}
		link, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("readlink %s: %w", next, err)
		}
		if filepath.IsAbs(link) {
			cur = string(filepath.Separator)
		}
		todo = append(splitPath(link), todo...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// Check decides whether permission may act on name. Outside the work tree
// the external_directory permission decides first (pattern: the absolute
// path); when it allows, permission itself is checked on the absolute path.
// Inside, .runner directories (the runner's own state, RunnerState) are
// denied whatever the rules say; .git directories and .env* files are
// protected: only a rule that names them explicitly can allow them. The
// Target is valid when the decision allows.
func (p Paths) Check(rs Ruleset, permission, name string) (Decision, Target) {
	t, err := p.Resolve(name)
	if err != nil {
		return DefaultDeny(permission, name, fmt.Sprintf("invalid path %s: %v", strconv.Quote(name), err)), t
	}
	rs, pat := p.rulesFor(rs, t.Pattern())
	if !t.Inside {
		d := rs.Evaluate(ExternalDirectory, pat)
		if !d.Allowed {
			d.Reason = fmt.Sprintf("%s is outside the work tree: %s", pat, d.Reason)
			return d, t
		}
		return rs.Evaluate(permission, pat), t
	}
	if RunnerState(t.Rel) {
		d := DefaultDeny(permission, pat, RunnerStateWhy(pat))
		d.Protection = RunnerDir
		return d, t
	}
	if what := ProtectedKind(t.Rel); what != "" {
		return rs.CheckProtected(permission, pat, what), t
	}
	return rs.Evaluate(permission, pat), t
}

// CheckWalked is Check for a path a walk reached: rel is a cleaned
// work-tree-relative slash path whose parent directories are real (not
// symlinks), as found by opening each from the work tree without following
// symlinks. It skips resolution, so its cost does not grow with rel's
// depth beyond reading rel once. A symlink at rel itself is resolved as
// Check does (its target decides).
func (p Paths) CheckWalked(rs Ruleset, permission, rel string, symlink bool) Decision {
	if symlink || rel == "" || rel == "." {
		d, _ := p.Check(rs, permission, rel)
		return d
	}
	rs, pat := p.rulesFor(rs, rel)
	if RunnerState(rel) {
		d := DefaultDeny(permission, pat, RunnerStateWhy(pat))
		d.Protection = RunnerDir
		return d
	}
	if what := ProtectedKind(rel); what != "" {
		return rs.CheckProtected(permission, pat, what)
	}
	return rs.Evaluate(permission, pat)
}

// RunnerDir is the directory the runner keeps its own state in, below the
// directory it runs from: .runner/runs/<run id>/ holds each run's
// events.jsonl, result.json, summary.md, changes.patch and history.jsonl.
const RunnerDir = ".runner"

// RunnerState reports whether the work-tree-relative slash path rel is in
// (or is) a .runner directory at any depth (the runner may be started from
// a subdirectory of the work tree), case ignored. No rule can allow
// a tool to read or change it: an earlier run's history would be fed to
// the model by --continue, its patch applied by the user.
func RunnerState(rel string) bool {
	for c := range dotComponents(rel) {
		if strings.EqualFold(c, RunnerDir) {
			return true
		}
	}
	return false
}

// dotComponents yields the components of the slash path rel that start
// with a dot. It jumps between them with strings.Index, so a deep path
// without such components costs one fast scan.
func dotComponents(rel string) iter.Seq[string] {
	return func(yield func(string) bool) {
		i := 0
		if !strings.HasPrefix(rel, ".") {
			j := strings.Index(rel, "/.")
			if j < 0 {
				return
			}
			i = j + 1
		}
		for {
			end := strings.IndexByte(rel[i:], '/')
			if end < 0 {
				yield(rel[i:])
				return
			}
			if !yield(rel[i : i+end]) {
				return
			}
			i += end
			j := strings.Index(rel[i:], "/.")
			if j < 0 {
				return
			}
			i += j + 1
		}
	}
}

// RunnerStateWhy is the reason of the built-in denial of a path in the
// runner's own state (RunnerState).
func RunnerStateWhy(pat string) string {
	return fmt.Sprintf("%s is in the runner's own state directory %s/ (the runs' logs, patches, results and histories): "+
		"no rule can allow a tool there; write the run's files elsewhere in the work tree", pat, RunnerDir)
}

// CheckPath is Paths.Check for a one-off question (e.g. redirection targets
// and `runner policy check`).
func CheckPath(rs Ruleset, workTree, permission, name string) Decision {
	p, err := NewPaths(workTree)
	if err != nil {
		return DefaultDeny(permission, name, err.Error())
	}
	d, _ := p.Check(rs, permission, name)
	return d
}

// ProtectedKind names the protected element of a work-tree-relative slash
// path: ".git" for anything in a .git directory, ".env" for a .env* file
// or anything in a .env* directory that is not a committed template
// (EnvTemplate), "" otherwise. Case is ignored: on case-insensitive file
// systems .GIT is the same directory, and a denial is the safe side.
func ProtectedKind(rel string) string {
	what := ""
	for c := range dotComponents(rel) {
		switch {
		case strings.EqualFold(c, ".git"):
			return ".git"
		case what == "" && len(c) >= 4 && strings.EqualFold(c[:4], ".env") && !EnvTemplate(c):
			what = ".env" // a file, or a directory (.env.d/x) at any depth
		}
	}
	return what
}

// envTemplateSuffixes end the names of committed .env templates.
var envTemplateSuffixes = []string{".example", ".sample", ".template", ".dist"}

// EnvTemplate reports whether base, a file name, is a committed template
// of an .env file (.env.example, .env.local.sample, .env.template,
// .env.dist; any case): it holds placeholders by design and is read by
// builds and tests, so it is an ordinary file (rules decide; the sandbox
// does not hide it), as OpenCode's default rules allow *.env.example.
// Hiding it cost more than it protected: under Landlock only, a hidden
// file at the work tree's root makes what a command creates there
// unreadable to that command.
func EnvTemplate(base string) bool {
	l := strings.ToLower(base)
	if !strings.HasPrefix(l, ".env") {
		return false
	}
	for _, s := range envTemplateSuffixes {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	return false
}

// CheckProtected evaluates a protected path: deny rules apply as usual,
// allow rules only when their pattern names the protected element.
func (rs Ruleset) CheckProtected(permission, rel, what string) Decision {
	allow := func(r Rule) bool { return NamesProtected(r.Pattern, what) && MatchPath(r.Pattern, rel) }
	deny := func(r Rule) bool { return MatchPath(r.Pattern, rel) }
	d := rs.Decide(permission, rel, allow, deny)
	if d.Rule == nil {
		d.Protection = what
		d.Reason = fmt.Sprintf("%s is protected (%s): only a rule for %s that names %s explicitly can allow it, e.g. %s: {%s: allow}",
			rel, ProtectedWhy(what), permission, what, permission, strconv.Quote(rel))
	}
	return d
}

// NamesProtected reports whether a rule pattern targets what (".git" or
// ".env") literally, e.g. ".git/**", "**/.env", "config/.env.*".
func NamesProtected(pattern, what string) bool {
	for _, c := range strings.Split(pattern, "/") {
		if what == ".git" && strings.EqualFold(c, ".git") {
			return true
		}
		if what == ".env" && strings.HasPrefix(strings.ToLower(c), ".env") {
			return true
		}
	}
	return false
}

// ProtectedWhy says in words why what (".git" or ".env") is protected.
func ProtectedWhy(what string) string {
	if what == ".git" {
		return "the repository's .git directory"
	}
	return "an .env file may hold secrets"
}
