package permission

import "testing"

// BenchmarkCheckBash measures the analysis of a typical agent command line.
func BenchmarkCheckBash(b *testing.B) {
	wt := b.TempDir()
	rs := open()
	const cmd = `cd src && go test ./... 2>&1 | tail -n 50; git diff --stat > /dev/null || echo "failed: $(date)"`
	for b.Loop() {
		CheckBash(rs, wt, cmd)
	}
}

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
