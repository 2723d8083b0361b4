package event

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/mirror"
)

// BenchmarkWriterFile compares, in one run, the event log written to a
// plain file (before: every run) with the log mirrored into a second file
// (internal/mirror, what a run under Landlock only does: two writes per
// line), for a small event and a tool.completed with 3.4 KB of output.
func BenchmarkWriterFile(b *testing.B) {
	events := map[string]Payload{
		"small": StepStarted{Step: 1},
		"tool":  ToolCompleted{Step: 1, CallID: "c", Tool: "bash", Output: strings.Repeat("some output line\n", 200), DurationMS: 3},
	}
	for _, ev := range []string{"small", "tool"} {
		for _, mode := range []string{"plain", "mirrored"} {
			b.Run(ev+"/"+mode, func(b *testing.B) {
				dir := b.TempDir()
				var f io.WriteCloser
				var err error
				path := filepath.Join(dir, "events.jsonl")
				if mode == "plain" {
					f, err = os.Create(path)
				} else {
					set := mirror.New()
					f, err = set.Create(path)
					if err == nil {
						err = set.Start(b.TempDir())
					}
				}
				if err != nil {
					b.Fatal(err)
				}
				w := Own(f, "bench", WithRedactor(NewRedactor([]string{"OPENAI_API_KEY=sk-bench-0123456789abcdef"})))
				defer w.Close()
				p := events[ev]
				b.ReportAllocs()
				for b.Loop() {
					if err := w.Emit(p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
