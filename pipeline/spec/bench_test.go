package spec

import (
	"os"
	"testing"
)

func BenchmarkLoadBytes(b *testing.B) {
	data, err := os.ReadFile("../../examples/review/task.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := LoadBytes("task.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	s, err := Load("../../examples/fix-tests/task.yaml")
	if err != nil {
		b.Fatal(err)
	}
	inputs := map[string]string{"package": "./pkg/...", "hint": "look at the parser"}
	for b.Loop() {
		if _, err := s.Render(inputs, TemplateData{}); err != nil {
			b.Fatal(err)
		}
	}
}
