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
		{kind: "sed-e", cmd: "sed -n '1{e touch .github/PWNED\n}' src/a.go", harmful: true, rules: p},
		{kind: "sed-e", cmd: "sed -n '1{p;q}' src/a.go", rules: p},
		{kind: "awk-getline", cmd: `awk 'BEGIN{ARGV[1]=".env"; ARGC=2}{print}'`, harmful: true, rules: p},
		{kind: "awk-getline", cmd: `awk 'BEGIN{for (i = 1; i < ARGC; i++) print ARGV[i]}' src/a.go`, rules: p},
		{kind: "dd-operand", cmd: "dd if=/dev/zero of=.github/x count=1", harmful: true, rules: p, need: "dd"},
		{kind: "dd-operand", cmd: "dd if=link-out/secret.txt", harmful: true, rules: p, need: "dd"},
		{kind: "tar-write", cmd: "tar -cf .github/x src", harmful: true, rules: p, need: "tar"},
		{kind: "writer-operand", cmd: "cp src/a.go .github/x", harmful: true, rules: p},
		{kind: "writer-operand", cmd: "touch .github/x", harmful: true, rules: p},
		{kind: "writer-operand", cmd: "mkdir -p .github/x", harmful: true, rules: p},
		{kind: "writer-operand", cmd: "ln -s ../src .github/x", harmful: true, rules: p},
		{kind: "writer-operand", cmd: "mkdir -p src/new && touch src/new/x.go && cp src/a.go src/new/", rules: p},
		{kind: "make-shell-var", cmd: "printf 'test:\\n\\t@echo ok\\n' > Makefile && make test --eval='$(shell touch .github/PWNED)'", harmful: true, rules: p, need: "make"},
		{kind: "make-shell-var", cmd: "printf 'test:\\n\\t@echo ok\\n' > Makefile && make test .SHELLFLAGS='-c touch\\ .github/PWNED;'", harmful: true, rules: p, need: "make"},
		{kind: "make-shell-var", cmd: "printf 'test:\\n\\t@echo ok\\n' > Makefile && make test V=1 -j2", rules: p, need: "make"},
		{kind: "writer-operand", cmd: "uniq src/a.go .github/x", harmful: true, rules: p},
		{kind: "writer-operand", cmd: "sort src/a.go | uniq -c", rules: p},
		{kind: "extglob", cmd: "shopt -s extglob\ncat *(.)env", harmful: true, rules: p},
		{kind: "extglob", cmd: "shopt -s extglob\ncat ?(.)env", harmful: true, rules: p},
		{kind: "extglob", cmd: "shopt -s extglob\nls !(*.go)", rules: p},
		{kind: "npm-exec", cmd: "npm exec --offline -- touch .github/PWNED 2>/dev/null", harmful: true, rules: noTouch, need: "npm"},
		{kind: "bash-env", cmd: "mkdir -p z && printf 'touch .github/PWNED\\n' > z/.zshenv && ZDOTDIR=z zsh -c true", harmful: true, rules: p, need: "zsh"},
		{kind: "recursive-walk", cmd: "mkdir -p e && git diff --no-index e conf", harmful: true, rules: p},
		{kind: "recursive-walk", cmd: "git diff --no-index src/a.go f", rules: p},
		{kind: "wrapper-more", cmd: "split --filter='touch .github/PWNED' src/a.go", harmful: true, rules: p},
	}
}
