package event

import (
	"strings"
	"testing"
)

func BenchmarkRedact(b *testing.B) {
	env := []string{"OPENAI_API_KEY=sk-bench-0123456789abcdefghijkl", "GITHUB_TOKEN=ghs_benchbenchbenchbenchbench0123"}
	r := NewRedactor(env)
	for _, size := range []int{100, 10_000, 100_000} {
		text := strings.Repeat("ordinary tool output without secrets, line of go test output\n", size/60+1)[:size]
		b.Run(strings.ReplaceAll(formatCount(int64(size)), ".0", ""), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				_ = r.Redact(text)
			}
		})
	}
}
