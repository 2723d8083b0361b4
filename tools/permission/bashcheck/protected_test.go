package bashcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// protectedTree is caseTree plus symlinks into the protected paths.
func protectedTree(t *testing.T) string {
	t.Helper()
	wt := caseTree(t)
	for link, target := range map[string]string{"envlink": ".env", "gitlink": ".git", "config/up": ".."} {
		if err := os.Symlink(target, filepath.Join(wt, link)); err != nil {
			t.Fatal(err)
		}
	}
	return wt
}

// TestCheckBashProtectedPaths: under a broad policy, bash arguments and
// input redirections that name .git or an .env* file get the read tool's
// protection; output redirections the edit tool's.
func TestCheckBashProtectedPaths(t *testing.T) {
	t.Parallel()
	wt := protectedTree(t)
	envOK := Rule{Permission: Read, Pattern: ".env", Action: Allow}
	envGlobOK := Rule{Permission: Read, Pattern: ".env*", Action: Allow}
	gitRead := Rule{Permission: Read, Pattern: ".git/**", Action: Allow}
	tests := []struct {
		kind  string
		rules Ruleset
		cmd   string
		want  bool
	}{
		// a first user's trial
		{"env", broad(), "cat .env", false},
		{"env", broad(), "cat < .env", false},
		{"env", broad(), "cp .env x.txt", false},
		{"env", broad(), "cat sub/.env", false},
		{"env", broad(), "cat config/.env.production", false},
		{"env", broad(), "cat ./.ENV", false},
		{"env", broad(), "cat src/../.env", false},
		{"env", broad(), "cd src && cat ../.env", false},
		{"env", broad(), "cd $D && cat ../.env", false},
		{"env", broad(), "sh -c 'cat .env'", false},
		{"env", broad(), "xargs cat .env", false},
		{"env", broad(), "grep TOKEN .env", false},
		{"env", broad(), "cat -- .env", false},
		{"env", broad(), "diff --from-file=.env x", false},
		{"env", broad(envOK), "cat .env", true},
		{"env", broad(envOK), "cat < .env", true},
		{"env", broad(envOK), "cat config/.env.production", false},
		{"env", broad(envOK, Rule{Permission: Read, Pattern: ".env", Action: Deny}), "cat .env", false},
		{"env", broad(Rule{Permission: Edit, Pattern: ".env", Action: Allow}), "cat .env", false}, // an argument needs read
		{"git", broad(), "cat .git/config", false},
		{"git", broad(), "cp x .git/hooks/pre-commit", false},
		{"git", broad(), "echo x > .git/hooks/post-checkout", false},
		{"git", broad(), "ls .git", false},
		{"git", broad(), "cat src/../.git/HEAD", false},
		{"git", broad(), "cat < .GIT/config", false},
		{"git", broad(gitRead), "cat .git/config", true},
		{"git", broad(gitRead), "echo x > .git/hooks/post-checkout", false}, // a write needs edit
		{"git", broad(Rule{Permission: Edit, Pattern: ".git/**", Action: Allow}), "echo x > .git/hooks/post-checkout", true},
		// symlinks are resolved
		{"symlink", broad(), "cat envlink", false},
		{"symlink", broad(), "cat gitlink/config", false},
		{"symlink", broad(), "cat gitlink/c*", false},
		{"symlink", broad(), "cat config/up/.env", false},
		// globs: a component starting with a literal that could be protected
		{"glob", broad(), "cat .env*", false},
		{"glob", broad(), "cat .e*", false},
		{"glob", broad(), "cat .[e]nv", false},
		{"glob", broad(), "cat .*", false},
		{"glob", broad(), "cat .g?t/config", false},
		{"glob", broad(), "cat .git/*", false},
		{"glob", broad(), "cat */.env", false},
		{"glob", broad(), "cat config/.env.*", false},
		{"glob", broad(), "cat {.env,x}", false},
		{"glob", broad(), "cat @(.env)", false},
		{"glob", broad(), "cat $(echo .env)", false},
		{"glob", broad(), `cat "$D/.env"`, false},
		{"glob", broad(envGlobOK), "cat .env*", true},
		{"glob", broad(envOK), "cat .env*", false},
		{"glob", broad(Rule{Permission: Read, Pattern: ".env?", Action: Allow}), "cat .env*", false},
		{"glob", broad(envGlobOK, Rule{Permission: Read, Pattern: ".env.production", Action: Deny}), "cat .env*", false},
		{"glob", broad(), "cat src/*", true}, // bash's * skips dotfiles
		{"glob", broad(), "cat *", false},    // matches link-out, which points out of the work tree
		{"glob", broad(), "cat *.go", true},  // likewise
		{"glob", broad(), "cat src/*.go", true},
		{"glob", broad(), "cat $F", false}, // only known at run time
		{"glob", broad(), "ls -d src/*/", true},
		{"glob", broad(), "ls -d */", false}, // link-out/ matches
		// allowed: no protected path named
		{"allowed", broad(), "cat src/a.go", true},
		{"allowed", broad(), "cat README.md", true},
		{"allowed", broad(), "git status", true},
		{"allowed", broad(), "git diff HEAD~1", true},
		{"allowed", broad(), "git log --oneline -5", true},
		{"allowed", broad(), "ls -a", true},
		{"allowed", broad(), "ls -la .", true},
		{"allowed", broad(), "cat .gitignore", true},
		{"allowed", broad(), "cat .github/workflows/ci.yml", true},
		{"allowed", broad(), "cat env.txt", true},
		{"allowed", broad(), "echo .env", true},
		{"allowed", broad(), "cd src && go test ./...", true},
		// exclusions name a path to leave out
		{"exclude", broad(), "grep -r TOKEN --exclude-dir=.git --exclude=.env* .", true},
		{"exclude", broad(), "grep -r TOKEN --exclude-dir=.git --exclude '.env*' .", true},
		{"exclude", broad(), "grep -rn TOKEN --exclude-dir=.git --exclude=.env config", false}, // .env.production is not .env
		{"exclude", broad(), "grep -r TOKEN --exclude-dir=.git .", false},                      // reads .env
		{"exclude", broad(), "grep -r TOKEN --exclude=.env* .", false},                         // reads .git/config
		{"exclude", broad(), "tar -czf out.tgz --exclude .git src", true},
		{"exclude", broad(), "find . -path ./.git -prune -o -name '*.go' -print", true},
		{"exclude", broad(), "find . -name '*.go' -not -path './.git/*'", true},
		{"exclude", broad(), "find . ! -name .env", true},
		{"exclude", broad(), "find . -name .env", false},
		{"exclude", broad(), "find . -name .env -exec cat {} +", false},
		{"exclude", broad(), "grep -r TOKEN --exclude-from=.env .", false},
		// git reads .git itself; naming a protected path to git is still a path
		{"git-cmd", broad(), "git add .env", false},
		{"git-cmd", broad(), "git diff -- .env", false},
		{"git-cmd", broad(), "git -C .git status", false},
		{"git-cmd", broad(), "git add .gitignore src", true},
		// a word that merely looks like a protected path is denied too
		{"lookalike", broad(), "grep .env src", true}, // grep's first operand is its pattern
		{"lookalike", broad(), "grep -e x .env", false},
		{"lookalike", broad(), "grep -e x --ignore .env", false}, // --ignore is --ignore-case: .env is a file
		{"lookalike", broad(), "grep --ignore x .env", false},
		{"lookalike", broad(), "grep --fi=.env x src", false}, // --file (or ambiguous)
		{"lookalike", broad(), "grep -r '\\.env' src", true},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.cmd, func(t *testing.T) {
			v := Check(tt.rules, wt, tt.cmd)
			if v.Allowed != tt.want {
				t.Errorf("Check(%q).Allowed = %v, want %v\nreason: %s\nchecks: %+v", tt.cmd, v.Allowed, tt.want, v.Reason, v.Checks)
			}
		})
	}
}

// TestCheckBashProtectedProvenance: the protection check is a path check
// naming the read permission, the work-tree pattern and the deciding rule.
func TestCheckBashProtectedProvenance(t *testing.T) {
	t.Parallel()
	wt := protectedTree(t)
	tests := []struct {
		rules            Ruleset
		cmd, subj, pat   string
		allowed          bool
		rule, reasonPart string
	}{
		{broad(), "cat .env", ".env", ".env", false, "", "protected"},
		{broad(), "cat envlink", "envlink", ".env", false, "", "protected"},
		{broad(Rule{Permission: Read, Pattern: ".env", Action: Allow}), "cat .env", ".env", ".env", true, `read ".env": allow`, ""},
		{broad(Rule{Permission: Read, Pattern: "**/.env*", Action: Allow}, Rule{Permission: Read, Pattern: "config/**", Action: Deny}), "cat config/.env.production",
			"config/.env.production", "config/.env.production", false, `read "config/**": deny`, "denied"},
		{broad(), "cat < .git/config", ".git/config", ".git/config", false, "", ".git"},
		{broad(), "cat .e*", ".e*", ".e*", false, "", "may expand"},
		{broad(Rule{Permission: Read, Pattern: ".env*", Action: Allow}), "cat .env*", ".env*", ".env*", true, `read ".env*": allow`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			v := Check(tt.rules, wt, tt.cmd)
			var got *permission.Check
			for i, c := range v.Checks {
				if c.Kind == KindPath && c.Decision.Permission == Read {
					got = &v.Checks[i]
					break
				}
			}
			if got == nil {
				t.Fatalf("no read path check in %+v", v.Checks)
			}
			d := got.Decision
			if got.Subject != tt.subj || d.Pattern != tt.pat || d.Allowed != tt.allowed {
				t.Errorf("check = %+v, want subject %q pattern %q allowed %v", *got, tt.subj, tt.pat, tt.allowed)
			}
			if (d.Rule == nil) != (tt.rule == "") || (d.Rule != nil && d.Rule.String() != tt.rule) {
				t.Errorf("rule = %v, want %q", d.Rule, tt.rule)
			}
			if !strings.Contains(d.Reason, tt.reasonPart) {
				t.Errorf("reason %q does not say %q", d.Reason, tt.reasonPart)
			}
			if v.Allowed != tt.allowed {
				t.Errorf("verdict allowed = %v, want %v: %s", v.Allowed, tt.allowed, v.Reason)
			}
		})
	}
	text := Explain(broad(), wt, permission.Query{Permission: Bash, Target: "cat .env"}).Text()
	if !strings.Contains(text, "deny   path      .env") || !strings.Contains(text, "protected") {
		t.Errorf("explanation does not show the protection check:\n%s", text)
	}
}
