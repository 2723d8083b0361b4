package bashcheck

// variantCases are real-bash runs of the attacks in testdata/variants.jsonl
// that the scratch tree can show, with the everyday commands beside them.
func variantCases() []realCase {
	p := permissive()
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
	}
}
