package bashcheck

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// everydayPolicies are the policies a sensible user writes for the
// corpus' three kinds of project: the build and test tools of the
// language, git's read commands, the usual read-only shell tools, edits
// anywhere but .github/ (and no dynamic_args: the corpus shows what that
// costs).
func everydayPolicies() map[string]map[string]any {
	shared := []string{"git status*", "git diff*", "git log*", "git show*", "git branch*", "git rev-parse *",
		"git ls-files*", "git blame *", "git grep *", "git stash list*", "git remote -v", "git tag --list*", "git --no-pager *",
		"grep *", "rg *", "cat *", "head *", "tail *", "wc *", "ls*", "find *", "sed -n *", "sort *", "uniq *", "cut *",
		"awk *", "tr *", "echo *", "printf *", "pwd", "cd *", "pushd *", "popd", "which *", "command -v *", "diff *",
		"tree *", "test *", "[ *", "true", "date", "basename *", "dirname *", "mkdir -p *", "xargs *", "tee *", "time *", "timeout *"}
	langs := map[string][]string{
		"go":     {"go test *", "go build *", "go vet *", "go run *", "go mod tidy", "go list *", "go env *", "go version", "go doc *", "go tool cover *", "gofmt *", "GOOS=* go build *", "CGO_ENABLED=0 go build *", "GOFLAGS=* go test *"},
		"node":   {"npm test*", "npm run *", "npx *", "node *", "npm ls*"},
		"python": {"pytest*", "python *", "python -m *", "pip list*", "ruff *"},
	}
	out := map[string]map[string]any{}
	for name, cmds := range langs {
		bash := map[string]any{}
		for _, c := range append(append([]string(nil), shared...), cmds...) {
			bash[c] = "allow"
		}
		out[name] = map[string]any{"read": "allow", "bash": bash, "edit": map[string]any{"**": "allow", ".github/**": "deny"}}
	}
	return out
}

// everydayDenied are the corpus commands the check denies under their
// policy, each with why (README, "Permissions"): the price of judging
// what bash will do.
func everydayDenied() map[string]string {
	const runtime = "its file arguments are only known at run time; the user opts in with dynamic_args"
	return map[string]string{
		"wc -l $(git ls-files '*.go') | tail -1":                        "$(…) as arguments: " + runtime,
		"find . -type f -name '*.go' | xargs wc -l | sort -n | tail -5": "xargs' input as arguments: " + runtime,
		"find . -name \"*.go\" -exec grep -l \"context.Context\" {} +":  "find's {} (which can be .git/… or .env.go): " + runtime,
	}
}

// everydayTree is a project tree without links out of it: src/, internal/,
// cmd/app, pkg/parser, tests/, web/, README.md, go.mod, package.json.
func everydayTree(t *testing.T) string {
	t.Helper()
	wt := t.TempDir()
	for _, name := range []string{"src/a.go", "src/b.go", "internal/x/x.go", "cmd/app/main.go", "pkg/parser/parser.go",
		"tests/test_parser.py", "web/package.json", "README.md", "go.mod", "go.sum", "package.json", "names.txt", "counts.txt"} {
		p := filepath.Join(wt, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wt
}

// TestEverydayCorpus: at least 98% of the commands agents run every day
// are allowed under the policy a sensible user writes, and every one
// denied is listed with its reason in everydayDenied.
func TestEverydayCorpus(t *testing.T) {
	t.Parallel()
	wt := everydayTree(t)
	policies := everydayPolicies()
	f, err := os.Open(filepath.Join("testdata", "everyday.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := everydayDenied()
	total, denied := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct{ Policy, Command string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		rs, err := permission.FromSpec(policies[c.Policy])
		if err != nil || policies[c.Policy] == nil {
			t.Fatalf("policy %q: %v", c.Policy, err)
		}
		total++
		v := Check(rs, wt, c.Command)
		_, listed := known[c.Command]
		switch {
		case !v.Allowed && !listed:
			t.Errorf("denied under %s: %q\n  %s", c.Policy, c.Command, v.Reason)
			denied++
		case !v.Allowed:
			denied++
		case listed:
			t.Errorf("%q is listed as denied but is allowed: drop it from everydayDenied", c.Command)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if total < 150 {
		t.Errorf("the corpus has %d commands, want at least 150", total)
	}
	if allowed := float64(total-denied) / float64(total); allowed < 0.98 {
		t.Errorf("%d of %d allowed (%.1f%%), want at least 98%%", total-denied, total, 100*allowed)
	}
	t.Logf("%d of %d everyday commands allowed", total-denied, total)
}
