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
	}
}
