package bashcheck

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// broad allows every command and every edit, as a newcomer's first
// policy does; external_directory has no rule.
func broad(extra ...Rule) Ruleset {
	return append(Ruleset{{Permission: Bash, Pattern: "*", Action: Allow}, {Permission: Edit, Pattern: "**", Action: Allow}, {Permission: Read, Pattern: "**", Action: Allow}}, extra...)
}

// TestCheckBashPathArguments: the arguments of a broadly allowed command
// that name paths outside the work tree must pass external_directory.
func TestCheckBashPathArguments(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	tmpOK := Rule{Permission: ExternalDirectory, Pattern: "/tmp/**", Action: Allow}
	homeOK := Rule{Permission: ExternalDirectory, Pattern: "~/**", Action: Allow}
	tests := []struct {
		kind  string
		rules Ruleset
		cmd   string
		want  bool
	}{
		// a first user's trial
		{"absolute", broad(), "rm -rf /tmp/nc/victim", false},
		{"absolute", broad(), "rm -rf /tmp/x", false},
		{"absolute", broad(tmpOK), "rm -rf /tmp/x", true},
		{"absolute", broad(tmpOK, Rule{Permission: ExternalDirectory, Pattern: "/tmp/keep/**", Action: Deny}), "rm -rf /tmp/keep/x", false},
		{"absolute", broad(), "cat /etc/hostname > leak.txt", false},
		{"absolute", broad(), "rm -rf /", false},
		{"absolute", broad(), "find / -name id_rsa", false},
		{"absolute", broad(), "git -C /tmp status", false},
		{"absolute", broad(), "cat /proc/cpuinfo", false},
		{"relative", broad(), "cat ../../etc/passwd", false},
		{"relative", broad(), "git log -- ../x", false},
		{"relative", broad(), "ls src", true},
		{"relative", broad(), "cat src/../docs/x.md", true},
		{"relative", broad(), "cat '~/x'", true}, // quoted: a file named ~ in the work tree
		{"symlink", broad(), "cat link-out/secret.txt", false},
		{"symlink", broad(), "cat link-out", false},
		// options and assignments
		{"option", broad(), "go test ./... -coverprofile=/tmp/c.out", false},
		{"option", broad(tmpOK), "go test ./... -coverprofile=/tmp/c.out", true},
		{"option", broad(), "go test ./... -coverprofile=c.out", true},
		{"option", broad(), "go test -test.outputdir=/tmp/o ./...", false},
		{"option", broad(), "go build -o /usr/local/bin/x .", false},
		{"option", broad(), "sort -o/tmp/x f", false},
		{"option", broad(), "gcc -I/usr/include x.c", false},
		{"option", broad(), "tar -C.. -xf a.tar", false},
		{"option", broad(), "cut -d/ -f1 f", true},
		{"option", broad(), "awk -F/ '{print $1}' f", true},
		{"option", broad(), "ls -la", true},
		{"option", broad(), "go build -ldflags=-X=main.v=1 ./...", true},
		{"assign-arg", broad(), "dd if=/etc/passwd of=x", false},
		{"assign-arg", broad(), "make PREFIX=~/x install", false},
		{"assign-arg", broad(), "make V=1 CC=gcc", true},
		{"assign-arg", broad(), "git config a=b", true},
		// not paths
		{"url", broad(), "curl https://x/y", true},
		{"url", broad(), "curl https://x/../../../etc", true},
		{"url", broad(), "git clone git@github.com:o/r.git", true},
		{"device", broad(), "echo hi > /dev/null", true},
		{"device", broad(), "head -c 8 /dev/urandom", true},
		{"device", broad(), "cat /dev/stdin", true},
		{"echo", broad(), "echo /etc/passwd", true},
		{"echo", broad(), "printf '%s\\n' /etc/passwd", true},
		{"program", broad(), "/usr/bin/env", true},
		{"program", broad(), "timeout 5 /usr/bin/true", true},
		{"program", broad(), "sh -c '/bin/ls'", true},
		// home
		{"home", broad(), "grep -r foo ~/.ssh", false},
		{"home", broad(homeOK), "grep -r foo ~/.ssh", true},
		{"home", broad(homeOK), "cat ~/../other/x", false},
		{"home", broad(), `cat "$HOME/.ssh/id_rsa"`, false},
		{"home", broad(), "cat ${HOME}/.netrc", false},
		{"home", broad(), "ls ~", false},
		{"home", broad(), "cat ${HOME:-/}/x", false},
		{"home", broad(), "cat $HOMEDIR/x", false}, // another variable: only known at run time
		{"home", broad(), "cat ~root/.profile", false},
		{"home", broad(), "cd && cat .bashrc", false},
		// expansions
		{"glob", broad(), "ls /tmp/*", false},
		{"glob", broad(), "cat /etc/{passwd,shadow}", false},
		{"glob", broad(), "cat ../*.md", false},
		{"glob", broad(), "cat src/*.go", true},
		{"dynamic", broad(), "cat $F", false}, // only known at run time
		{"dynamic", broad(Rule{Permission: DynamicArgs, Pattern: "cat *", Action: Allow}), "cat $F", true},
		{"dynamic", broad(), "cat /etc/$F", false},
		{"ansi-c", broad(), "cat $'/etc/passwd'", false},
		{"ansi-c", broad(), "cat $'\\x2fetc/passwd'", false},
		{"ansi-c", broad(), "cat $'\\x2e\\x2e/x'", false},
		{"ansi-c", broad(), "sort -t $'\\t' -k2 f", true},
		{"ansi-c", broad(), "cat $'src/a.go'", true},
		// the directory after cd
		{"cd", broad(), "cd src && cat ../README.md", true},
		{"cd", broad(), "cd src && cat ../../x", false},
		{"cd", broad(), "cd src; cat ../README.md", false}, // cd may fail: cat would run in the root
		{"cd", broad(), "cd nowhere/deep; cat ../../x", false},
		{"cd", broad(), "(cd src && cat ../a) && cat ../x", false},
		{"cd", broad(), "(cd src && cat ../README.md) && cat README.md", true},
		{"cd", broad(), "pushd src && cat ../README.md && popd", true},
		{"cd", broad(), "cd /tmp", false},
		{"cd", broad(), "cd ..", false},
		{"cd", broad(), "cd $D && go test ./...", true},
		{"cd", broad(), "cd $D && cat ../x", false},
		{"cd", broad(), "if true; then cd src; fi && cat ../x", false},
		{"cd", broad(), "for d in a b; do cat ../x; cd src; done", false},
		{"cd", broad(), "while true; do cd src; done; cat ../../x", false},
		{"cd", broad(), "cd src && sh -c 'cat ../README.md'", true},
		{"cd", broad(), "cd src && sh -c 'cat ../../x'", false},
		{"cd", broad(), "cd src && echo $(cat ../../x)", false},
		// wrappers and scripts
		{"wrapper", broad(), "sh -c 'cat /etc/passwd'", false},
		{"wrapper", broad(), "find . -exec cat /etc/passwd \\;", false},
		{"wrapper", broad(), "xargs -I{} cp {} /tmp/out", false},
		{"wrapper", broad(), "timeout 5 rm -rf /tmp/x", false},
		{"wrapper", broad(), "env FOO=1 cat /etc/passwd", false},
		// input redirections
		{"input", broad(), "cat < /etc/passwd", false},
		{"input", broad(), "wc -l < src/a.go", true},
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

// TestCheckBashPathProvenance: a path check names the path, the
// permission and the rule that decided, so `runner policy check --bash`
// can explain it.
func TestCheckBashPathProvenance(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	outside, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(wt), "outside"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rules            Ruleset
		cmd, subj, pat   string
		allowed          bool
		rule, reasonPart string
	}{
		{broad(), "rm -rf /tmp/x", "/tmp/x", "/tmp/x", false, "", "outside the work tree"},
		{broad(Rule{Permission: ExternalDirectory, Pattern: "/tmp/**", Action: Allow}), "rm -rf /tmp/x", "/tmp/x", "/tmp/x", true, `external_directory "/tmp/**": allow`, ""},
		{broad(), "go test -coverprofile=/tmp/c.out", "-coverprofile=/tmp/c.out", "/tmp/c.out", false, "", "outside"},
		{broad(), "grep -r foo ~/.ssh", "~/.ssh", "~/.ssh", false, "", "home directory"},
		{broad(), "cat link-out/secret.txt", "link-out/secret.txt", filepath.ToSlash(filepath.Join(outside, "secret.txt")), false, "", "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			v := Check(tt.rules, wt, tt.cmd)
			var got *permission.Check
			for i, c := range v.Checks {
				if c.Kind == KindPath {
					got = &v.Checks[i]
				}
			}
			if got == nil {
				t.Fatalf("no path check in %+v", v.Checks)
			}
			d := got.Decision
			if got.Subject != tt.subj || d.Permission != ExternalDirectory || d.Pattern != tt.pat || d.Allowed != tt.allowed {
				t.Errorf("check = %+v, want subject %q pattern %q allowed %v", *got, tt.subj, tt.pat, tt.allowed)
			}
			if (d.Rule == nil) != (tt.rule == "") || (d.Rule != nil && d.Rule.String() != tt.rule) {
				t.Errorf("rule = %v, want %q", d.Rule, tt.rule)
			}
			if !strings.Contains(d.Reason, tt.reasonPart) {
				t.Errorf("reason %q does not say %q", d.Reason, tt.reasonPart)
			}
		})
	}
	text := Explain(broad(), wt, permission.Query{Permission: Bash, Target: "rm -rf /tmp/x"}).Text()
	if !strings.Contains(text, "deny   path      /tmp/x") || !strings.Contains(text, "external_directory") {
		t.Errorf("explanation does not show the path check:\n%s", text)
	}
}
