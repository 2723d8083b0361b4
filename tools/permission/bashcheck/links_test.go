package bashcheck

import "testing"

// TestCheckBashLinkThrough: a path through a directory that does not
// exist yet is denied after a command that may create it as a symlink.
func TestCheckBashLinkThrough(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	tests := []struct {
		cmd  string
		want bool
	}{
		{"git apply p.diff && cat l/passwd", false},
		{"tar -xf a.tar; cat l/passwd", false},
		{"git checkout x && echo hi > l/y", false},
		{"for i in 1 2; do cat l/x; git apply p.diff; done", false}, // the second pass runs after the first apply
		{"sh -c 'git apply p.diff && cat l/x'", false},
		{"npm ci && cat node_modules/x/package.json", false},
		{"cat l/passwd; git apply p.diff", true}, // before it: l is not there, the read fails
		{"git apply p.diff && cat src/a.go", true},
		{"mkdir -p src/new && touch src/new/x.go && cat src/new/x.go", true},
		{"mkdir -p build && go build -o build/app ./src && ls -la build", true},
		{"python3 -m pytest tests/test_a.py::test_x -vv", true}, // the creator's own words
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if v := Check(open(), wt, tt.cmd); v.Allowed != tt.want {
				t.Errorf("Check(%q).Allowed = %v, want %v\nreason: %s", tt.cmd, v.Allowed, tt.want, v.Reason)
			}
		})
	}
}
