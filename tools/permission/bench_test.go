package permission

import "testing"

// BenchmarkCheckPath measures one path decision with symlink resolution.
func BenchmarkCheckPath(b *testing.B) {
	wt := b.TempDir()
	p, err := NewPaths(wt)
	if err != nil {
		b.Fatal(err)
	}
	rs := Ruleset{{Edit, "**", Allow}, {Edit, "vendor/**", Deny}}
	for b.Loop() {
		p.Check(rs, Edit, "src/pkg/deep/file.go")
	}
}
