package bashcheck

import (
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// TestCheckBashWalk: a program that walks a directory reads the protected
// entries below it, unless the sandbox hides them or the walk leaves
// them out.
func TestCheckBashWalk(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	p, err := permission.NewPaths(wt)
	if err != nil {
		t.Fatal(err)
	}
	envOK := append(open(), Rule{Permission: Read, Pattern: "**/.env*", Action: Allow}, Rule{Permission: Read, Pattern: ".git/**", Action: Allow})
	tests := []struct {
		rules         Ruleset
		cmd           string
		want, inSandB bool
	}{
		{open(), "grep -r '' .", false, true},
		{open(), "grep -R x", false, true}, // no operand: grep -r searches .
		{open(), "grep --recursive x config", false, true},
		{open(), "grep -d recurse x config", false, true},
		{open(), "grep -rn x --exclude-dir=.git --exclude='.env*' .", true, true},
		{open(), "grep -rn x --exclude-dir=.git --include='*.go' .", true, true},
		{open(), "grep -R x src", true, true},
		{open(), "grep -R x .", false, true},
		{open(), "grep -r x link-out", false, false}, // outside: external_directory
		{open(), "grep x .env.example", true, true},
		{open(), "tar -czf /dev/null .", false, true},
		{open(), "tar czf /dev/null config", false, true},
		{open(), "tar -czf /dev/null -C src .", true, true},
		{open(), "tar -czf /dev/null --exclude=.git --exclude='.env*' .", true, true},
		{open(), "cp -r config out", false, true},
		{open(), "cp -r src out", true, true},
		{open(), "diff -r config docs", false, true},
		{open(), "zip -r /dev/null .", false, true},
		{open(), "rg x", true, true}, // rg skips hidden entries
		{open(), "rg --hidden x", false, true},
		{open(), "rg --hidden -g '!.git' -g '!.env*' x", true, true},
		{envOK, "grep -r '' .", true, true}, // rules that name them allow the walk
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if v := Check(tt.rules, wt, tt.cmd); v.Allowed != tt.want {
				t.Errorf("Check(%q).Allowed = %v, want %v\nreason: %s", tt.cmd, v.Allowed, tt.want, v.Reason)
			}
			if v := CheckWith(tt.rules, p, tt.cmd, Options{ProtectedHidden: true}); v.Allowed != tt.inSandB {
				t.Errorf("in the sandbox, Check(%q).Allowed = %v, want %v\nreason: %s", tt.cmd, v.Allowed, tt.inSandB, v.Reason)
			}
		})
	}
}
