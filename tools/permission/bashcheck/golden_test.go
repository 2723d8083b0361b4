package bashcheck

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/policycheck")

// TestPolicyCheckGolden keeps the text `runner policy check --bash CMD`
// prints (Explanation.Text) for one example of every kind, under the
// realistic policy, in testdata/policycheck/KIND.golden; the work tree's
// parent directory is written as $WORK.
func TestPolicyCheckGolden(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	examples := []struct{ kind, cmd string }{
		{"arithmetic", "for i in 'a[$(touch x)]'; do (( i )); done"},
		{"assignment", "for PATH in ./bin; do ls; done"},
		{"brace", "cat {.e,}nv"},
		{"dynamic", "echo .env | xargs cat"},
		{"dynamic-opt-in", "find . -name '*.go' | xargs grep -n TODO"},
		{"option-cluster", "git difftool -yx 'touch x' HEAD"},
		{"option-go-exec", "go test -exec 'touch x' ./..."},
		{"option-abbreviation", "grep --ign -e token .env"},
		{"glob-symlink", "cat */secret.txt"},
		{"blob", "git show HEAD:.env"},
		{"cd-round-trip", "cd src && go test ./... && cd .."},
	}
	for _, ex := range examples {
		t.Run(ex.kind, func(t *testing.T) {
			rs := realistic()
			if ex.kind == "dynamic-opt-in" {
				rs = append(rs, Rule{Permission: DynamicArgs, Pattern: "grep *", Action: Allow})
			}
			text := Explain(rs, wt, permission.Query{Permission: Bash, Target: ex.cmd}).Text()
			text = strings.ReplaceAll(text, filepath.Dir(wt), "$WORK")
			file := filepath.Join("testdata", "policycheck", ex.kind+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./tools/permission/bashcheck -run TestPolicyCheckGolden -update)", err)
			}
			if text != string(want) {
				t.Errorf("policy check output changed (rerun with -update if intended):\n--- got\n%s--- want\n%s", text, want)
			}
		})
	}
}
