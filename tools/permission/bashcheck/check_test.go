package bashcheck

import (
	"strings"
	"testing"
)

// strict allows a handful of commands and edits under src/.
func strict() Ruleset {
	return Ruleset{
		{Permission: Bash, Pattern: "git status", Action: Allow}, {Permission: Bash, Pattern: "git diff*", Action: Allow}, {Permission: Bash, Pattern: "go test *", Action: Allow},
		{Permission: Bash, Pattern: "echo *", Action: Allow}, {Permission: Bash, Pattern: "ls*", Action: Allow}, {Permission: Bash, Pattern: "cat *", Action: Allow}, {Permission: Bash, Pattern: "grep *", Action: Allow},
		{Permission: Bash, Pattern: "[ *", Action: Allow}, {Permission: Bash, Pattern: "true", Action: Allow}, {Permission: Bash, Pattern: "cd *", Action: Allow},
		{Permission: Edit, Pattern: "src/**", Action: Allow}, {Permission: Read, Pattern: "*", Action: Allow},
	}
}

// open allows every command except a few.
func open() Ruleset {
	return Ruleset{
		{Permission: Bash, Pattern: "*", Action: Allow}, {Permission: Bash, Pattern: "rm *", Action: Deny}, {Permission: Bash, Pattern: "curl *", Action: Deny}, {Permission: Bash, Pattern: "git push*", Action: Deny},
		{Permission: Edit, Pattern: "**", Action: Allow},
	}
}

func TestCheckBash(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	tests := []struct {
		rules Ruleset
		cmd   string
		want  bool
	}{
		// lists, pipelines, compound commands
		{strict(), "git status && git diff", true},
		{strict(), "git status & rm x", false},
		{strict(), "(git status; rm x)", false},
		{strict(), "if git status; then rm x; fi", false},
		{strict(), "if git status; then echo ok; else echo no; fi", true},
		{strict(), "while true; do rm x; done", false},
		{strict(), "case x in x) rm y;; esac", false},
		{strict(), "case x in x) echo y;; esac", true},
		{strict(), "for f in a b; do echo $f; done", true},
		{strict(), "! git status", true},
		{strict(), "git status |& grep x", true},
		{strict(), "echo $(git status)", true},
		{strict(), "echo \"$(rm x)\"", false},
		{strict(), "echo ${X:-$(rm x)}", false},
		{strict(), "echo $((1 + $(rm x)))", false},
		{strict(), "cat <<EOF\n$(rm x)\nEOF", false},
		{strict(), "cat <<'EOF'\n$(rm x)\nEOF", true},
		{strict(), "echo hi >(rm x)", false},
		{strict(), "[ -f x ] && echo yes", true},
		{strict(), "[[ -f $(rm x) ]]", false},
		{strict(), "time git status", true},
		{strict(), "time rm x", false},
		{strict(), "coproc rm x", false},
		// quoting and escapes
		{strict(), `\rm x`, false},
		{strict(), `"git" "status"`, true},
		{strict(), `gi\t status`, true},
		{strict(), `$'\x72m' x`, false},
		{strict(), `r{m,x} y`, false},
		{strict(), `/bin/r? y`, false},
		{strict(), `~/bin/git status`, false},
		// dynamic words
		{strict(), "$CMD", false},
		{strict(), "${CMD} status", false},
		{strict(), "$(echo rm) x", false},
		{strict(), "cat $f", false}, // only known at run time: needs dynamic_args
		{append(strict(), Rule{Permission: DynamicArgs, Pattern: "cat *", Action: Allow}), "cat $f", true},
		{strict(), "cat *.go", true},
		{strict(), "git status $X", false},
		{strict(), "git diff $X", false},
		{append(strict(), Rule{Permission: DynamicArgs, Pattern: "git diff *", Action: Allow}), "git diff $X", true},
		// assignment prefixes and declarations
		{strict(), "FOO=1 git status", false},
		{strict(), "X=1", false},
		{strict(), "export PATH=/tmp", false},
		{open(), "FOO=1 rm x", false},
		{open(), "X=$(rm y)", false},
		// path-qualified programs
		{strict(), "./git status", false},
		{open(), "./rm x", false},
		{open(), "/usr/bin/curl x", false},
		{Ruleset{{Permission: Bash, Pattern: "/usr/bin/git status", Action: Allow}}, "/usr/bin/git status", true},
		// eval, source, functions, traps
		{open(), "eval ls", false},
		{open(), "source x.sh", false},
		{open(), ". x.sh", false},
		{open(), "f() { ls; }; f", false},
		{open(), "function f { ls; }", false},
		{open(), "trap 'rm x' EXIT", false},
		{open(), "builtin eval ls", false},
		{open(), "command eval ls", false},
		// wrappers
		{open(), "timeout 5 rm x", false},
		{open(), "timeout -s KILL 5 rm x", false},
		{open(), "timeout --weird rm x", false},
		{open(), "nice -n 5 rm x", false},
		{open(), "nohup rm x", false},
		{open(), "exec rm x", false},
		{open(), "command rm x", false},
		{open(), "env -i FOO=1 rm x", false},
		{open(), "env -S 'ls'", false},
		{open(), "env $X ls", false},
		{open(), "sudo -u root rm x", false},
		{open(), "xargs rm", false},
		{open(), "xargs -I % % -rf", false},
		{open(), "ls | xargs -0 -n1 rm -f", false},
		{open(), "find . -name x -delete", true},
		{open(), "find . -execdir rm {} +", false},
		{open(), "find . -ok curl {} \\;", false},
		{open(), "find . $X", false},
		{open(), "find . -exec rm", false},
		{open(), "xargs sh -c 'rm x'", false},
		{open(), "timeout 5 go test ./...", true},
		{strict(), "timeout 60 go test ./...", true},
		{strict(), "nice go test", true},
		{strict(), "env CGO_ENABLED=0 go test ./...", false},
		{strict(), "git diff | xargs grep foo", false}, // xargs' input is only known at run time
		{append(strict(), Rule{Permission: DynamicArgs, Pattern: "grep *", Action: Allow}), "git diff | xargs grep foo", true},
		{strict(), "command -v go", true},
		{strict(), "/usr/bin/timeout 5 go test", false},
		{open(), "git -C . push origin", false},
		{open(), "git --no-pager -c x=y push", false},
		{open(), "git -C . status", true},
		{open(), "busybox rm x", false},
		{open(), "chroot / rm x", false},
		{open(), "flock /tmp/l rm x", false},
		{open(), "flock /tmp/l -c 'ls'", false},
		{open(), "watch -n 1 rm x", false},
		{open(), "watch -n 1 ls -la", true},
		{open(), "PS4='$(rm x)' ls", false},
		{open(), "export PS4='`rm x`'", false},
		{open(), "PS1='> ' ls", true},
		{open(), "GIT_SSH_COMMAND='rm -rf ~' git fetch", false},
		{open(), "GIT_PAGER=cat git log", true},
		{open(), "env GIT_PAGER='curl x' git log", false},
		{open(), "PAGER=$P git log", false},
		{open(), "LD_PRELOAD=/tmp/x.so ls", false},
		{open(), "BASH_ENV=/tmp/x bash -c ls", false},
		{open(), "git -c alias.x='!rm -rf ~' x", false},
		{open(), "git -c core.pager='rm x' log", false},
		{open(), "git -c user.name=x commit", true},
		{open(), "git --config-env=core.sshCommand=X fetch", false},
		{open(), "echo rm x | sh", false},
		{open(), "bash < script.sh", false},
		{open(), "sh -s < x", false},
		{open(), "bash -- build.sh", true},
		{open(), "bash ./build.sh arg", true},
		{open(), "sh -c", true},
		{open(), "alias r=rm", false},
		{open(), "alias", true},
		{open(), "enable -f /tmp/x.so rm", false},
		{open(), "hash -p /tmp/x ls", false},
		{open(), "mapfile -C 'rm x' a < f", false},
		{open(), "x='a[$(rm x)]'; (( x ))", false},
		{open(), "declare -i y='`rm x`'", false},
		// sh -c
		{open(), "bash -lc 'rm x'", false},
		{open(), "sh -e -c 'ls && rm x'", false},
		{open(), "bash -o pipefail -c 'rm x'", false},
		{open(), "sh -c \"$X\"", false},
		{open(), "sh -c 'sh -c \"rm x\"'", false},
		{open(), "sh -c 'ls; echo ok'", true},
		{open(), "sh -c 'unterminated", false},
		{strict(), "sh -c 'git status'", false},
		// redirections
		{strict(), "echo hi > src/out.txt", true},
		{strict(), "echo hi >> src/out.txt", true},
		{strict(), "echo hi &> notes.txt", false},
		{strict(), "echo hi >| notes.txt", false},
		{strict(), "echo hi 2> notes.txt", false},
		{strict(), "echo hi >& notes.txt", false},
		{strict(), "echo hi 2>&1", true},
		{strict(), "echo hi 2>&-", true},
		{strict(), "echo hi > /dev/null 2>&1", true},
		{strict(), "echo hi > ../x", false},
		{strict(), "echo hi > link-out/x.txt", false},
		{strict(), "echo hi > src/../.git/config", false},
		{strict(), "echo hi > $F", false},
		{strict(), "echo hi > ~/x", false},
		// a write after a cd is placed where the cd went (src/out.txt)
		{strict(), "cd src && echo hi > out.txt", true},
		{strict(), "cd src && echo hi > ../out.txt", false},
		{strict(), "cd src; echo hi > out.txt", false},      // cd may fail: out.txt at the root too
		{strict(), "cd vendor && echo hi > out.txt", false}, // vendor/out.txt: no edit rule
		{strict(), "echo hi > src/x; cd vendor", true},
		{strict(), "cd $D && echo hi > out.txt", false},
		{strict(), "cd link-out && echo hi > x.txt", false},
		{strict(), "cd src && cd .. && echo hi > out.txt", false},
		{strict(), "(cd src && echo hi > a) && echo hi > b", false}, // b is at the root
		{strict(), "(cd src && echo hi > a) && echo hi > src/b", true},
		{open(), "tar xf a.tar && cd src && echo hi > a", false}, // tar may have made src a link by then
		{open(), "tar xf a.tar && echo hi > src/a", true},
		{strict(), "cat < src/a.go", true},
		{strict(), "cat < .env", false}, // an input is read: .env is protected (bash_protected.go)
		{strict(), "{ echo hi; } > src/x", true},
		{strict(), "{ echo hi; } > vendor/x", false},
		// empty and broken input
		{strict(), "", false},
		{strict(), "   \n\t", false},
		{strict(), "# just a comment", false},
		{strict(), "git status (", false},
		{strict(), "echo 'a", false},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			v := Check(tt.rules, wt, tt.cmd)
			if v.Allowed != tt.want {
				t.Errorf("Check(%q).Allowed = %v, want %v\nreason: %s\nchecks: %+v", tt.cmd, v.Allowed, tt.want, v.Reason, v.Checks)
			}
		})
	}
}

func TestCheckBashProvenance(t *testing.T) {
	t.Parallel()
	wt := t.TempDir()
	v := Check(open(), wt, "ls -la; /bin/rm -rf build; echo hi > out.txt")
	if v.Allowed {
		t.Fatal("allowed")
	}
	want := []struct {
		kind, subject, rule string
		allowed             bool
	}{
		{KindCommand, "ls -la", `bash "*": allow`, true},
		{KindCommand, "/bin/rm -rf build", `bash "rm *": deny`, false},
		{KindWrite, "build", `edit "**": allow`, true}, // rm removes it: an edit, not a redirection
		{KindCommand, "echo hi", `bash "*": allow`, true},
		{KindRedirect, "out.txt", `edit "**": allow`, true},
	}
	if len(v.Checks) != len(want) {
		t.Fatalf("checks = %+v", v.Checks)
	}
	for i, w := range want {
		c := v.Checks[i]
		if c.Kind != w.kind || c.Subject != w.subject || c.Decision.Allowed != w.allowed || c.Decision.Rule == nil || c.Decision.Rule.String() != w.rule {
			t.Errorf("check %d = %+v (rule %v), want %+v", i, c, c.Decision.Rule, w)
		}
	}
	if !strings.Contains(v.Reason, `rm *`) {
		t.Errorf("reason %q does not name the deciding rule", v.Reason)
	}
	// The reason of an allowed line counts its checks in good English.
	if r := Check(open(), wt, "ls").Reason; r != "1 check allowed" {
		t.Errorf("one allowed check: reason %q", r)
	}
	if r := Check(open(), wt, "ls; echo hi").Reason; r != "all 2 checks allowed" {
		t.Errorf("two allowed checks: reason %q", r)
	}
	d := Check(strict(), wt, "rm x").Checks[0].Decision
	if d.Rule != nil || !strings.Contains(d.Reason, "default deny") {
		t.Errorf("default deny provenance = %+v", d)
	}
}
