package bashcheck

import (
	"strings"
	"testing"
)

// BenchmarkCheckBash measures the analysis of a typical agent command line.
func BenchmarkCheckBash(b *testing.B) {
	wt := b.TempDir()
	rs := open()
	const cmd = `cd src && go test ./... 2>&1 | tail -n 50; git diff --stat > /dev/null || echo "failed: $(date)"`
	for b.Loop() {
		Check(rs, wt, cmd)
	}
}

// hostileCommands are inputs built to make the analysis slow: nested
// wrappers with long words, deep substitutions, long lists.
func hostileCommands() map[string]string {
	long := strings.Repeat(strings.Repeat("a", 280)+" ", 220)
	return map[string]string{
		"wrappers-static":  strings.Repeat("timeout 1 ", 15) + "ls " + long,
		"wrappers-dynamic": strings.Repeat("timeout 1 ", 15) + "ls " + strings.Repeat(strings.Repeat("$a", 140)+" ", 220),
		"nested-subst":     strings.Repeat("$(", 200) + strings.Repeat(")", 200),
		"long-pipeline":    "(" + strings.Repeat("ls|", 12000) + "ls)",
	}
}

// BenchmarkCheckBashHostile measures the worst inputs within the bounds.
func BenchmarkCheckBashHostile(b *testing.B) {
	wt := b.TempDir()
	for name, cmd := range hostileCommands() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Check(open(), wt, cmd)
			}
		})
	}
}
