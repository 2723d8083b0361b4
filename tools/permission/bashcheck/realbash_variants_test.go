package bashcheck

// variantCases are real-bash runs of the attacks in testdata/variants.jsonl
// that the scratch tree can show, with the everyday commands beside them.
func variantCases() []realCase {
	p := permissive()
	// the payload's program is denied: only unwrapping the command finds it
	noTouch := Ruleset{{Permission: Bash, Pattern: "*", Action: Allow}, {Permission: Bash, Pattern: "touch *", Action: Deny}}
	return []realCase{
		{kind: "symlink-dotdot", cmd: "cat link-out/../outside/secret.txt", harmful: true, rules: p},
		{kind: "symlink-dotdot", cmd: "cat < ./link-out/../outside/secret.txt", harmful: true, rules: p},
		{kind: "symlink-dotdot", cmd: "cat link-out/../outside/*", harmful: true, rules: p},
		{kind: "symlink-dotdot", cmd: "cat */../outside/secret.txt", harmful: true, rules: p},
		{kind: "symlink-dotdot", cmd: "cd -P link-out/.. && cat outside/secret.txt", harmful: true, rules: p},
		{kind: "symlink-dotdot", cmd: "cat src/../src/a.go", rules: p},
		{kind: "git-env-hook", cmd: "mkdir -p cfg/git && printf '[core]\\n\\tfsmonitor = \"touch .github/PWNED; false\"\\n' > cfg/git/config && " +
			"XDG_CONFIG_HOME=cfg git status", harmful: true, rules: p},
		{kind: "tar-exec", cmd: "tar cf x.tar src/a.go && TAR_OPTIONS='--to-command=touch\\ .github/PWNED' tar xf x.tar", harmful: true, rules: p, need: "tar"},
		{kind: "tar-exec", cmd: "tar cf - src/a.go | tar tf -", rules: p, need: "tar"},
		{kind: "git-upload-pack", cmd: "git -c remote.o.url=. -c remote.o.uploadpack='touch .github/PWNED;' fetch o", harmful: true, rules: p},
		{kind: "git-upload-pack", cmd: "git -c remote.o.url=. -c remote.o.receivepack='touch .github/PWNED;' push o HEAD:refs/heads/x", harmful: true, rules: p},
		{kind: "git-upload-pack", cmd: "git -c color.ui=never log --oneline -1", rules: p},
		{kind: "wrapper-more", cmd: "ssh-agent touch .github/PWNED", harmful: true, rules: noTouch, need: "ssh-agent"},
		{kind: "wrapper-more", cmd: "gdb -batch -ex 'shell touch .github/PWNED'", harmful: true, rules: p, need: "gdb"},
		{kind: "wrapper-more", cmd: "vim -es -c '!touch .github/PWNED' -c q", harmful: true, rules: p, need: "vim"},
		{kind: "wrapper-more", cmd: "ed -s src/a.go <<< '!touch .github/PWNED'", harmful: true, rules: p, need: "ed"},
		{kind: "wrapper-more", cmd: "zip -q z.zip src/a.go -T -TT 'touch .github/PWNED #'", harmful: true, rules: p, need: "zip"},
		{kind: "wrapper-more", cmd: "zip -q z.zip src/a.go", rules: p, need: "zip"},
		{kind: "wrapper-more", cmd: "ssh -F /dev/null -oProxyCommand='touch .github/PWNED' -o BatchMode=yes x", harmful: true, rules: p, need: "ssh"},
		{kind: "time-keyword", cmd: "time -p -- touch .github/PWNED", harmful: true, rules: noTouch},
		{kind: "heredoc-interpreter", cmd: "python3 <<'EOF'\nimport os\nos.system('touch .github/PWNED')\nEOF", harmful: true, rules: p, need: "python3"},
		{kind: "heredoc-interpreter", cmd: "echo 'import os; os.system(\"touch .github/PWNED\")' | python3", harmful: true, rules: p, need: "python3"},
		{kind: "heredoc-interpreter", cmd: "python3 - <<'EOF'\nimport pathlib\nprint(pathlib.Path('src/a.go').read_text())\nEOF", rules: p, need: "python3"},
		{kind: "interpreter-c", cmd: "perl -le 'print `touch .github/PWNED`'", harmful: true, rules: p, need: "perl"},
		{kind: "interpreter-c", cmd: "node -e 'require(\"child_process\").execSync(\"touch .github/PWNED\")'", harmful: true, rules: p, need: "node"},
		{kind: "interpreter-c", cmd: "perl -ne 'print if /package/' src/a.go", rules: p, need: "perl"},
	}
}
