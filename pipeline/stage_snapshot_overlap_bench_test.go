package pipeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// BenchmarkBaseOverlap measures a short session on a 25,000-file tree
// (read, write, a bash command, the answer: four model requests, each
// answered after modelLatency) with the base snapshot taken before the
// session (serial, as before) and while the first request is in flight
// (overlap). Each iteration runs both, in alternating order, so both see
// the same load:
//
//	go test ./pipeline -run '^$' -bench BaseOverlap -benchtime 5x
//
// serial-ms and overlap-ms are median wall times of the whole run;
// serial-first-ms and overlap-first-ms the median time from the start of
// the run to the model's first request.
func BenchmarkBaseOverlap(b *testing.B) {
	const modelLatency = 300 * time.Millisecond
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	repo := filepath.Join(b.TempDir(), "repo")
	genStepTree(b, repo, 25000)
	time.Sleep(2100 * time.Millisecond) // at rest, past the snapshot's racy window, as a checkout is
	spec := filepath.Join(b.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(stepBenchSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	session := func(serial bool, i int) (total, first time.Duration) {
		replies := []llmtest.Reply{
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"d00/s00/f00000.txt"}`)}}.Reply(),
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", fmt.Sprintf(`{"path":"notes.txt","content":"%d\n"}`, i))}}.Reply(),
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"echo more >> notes.txt"}`)}}.Reply(),
			llmtest.Turn{Text: "Done."}.Reply(),
		}
		start := time.Now()
		srv := llmtest.NewBenchServer(b, func(n int) llmtest.Reply {
			if n == 0 {
				first = time.Since(start)
			}
			r := replies[min(n, len(replies)-1)]
			r.Delay = modelLatency
			return r
		})
		res, err := Exec(b.Context(), ExecOptions{
			Task: spec, Repo: repo, Out: b.TempDir(), Quiet: true, BaseURL: srv.URL(),
			APIKey: "sk-unit-0123456789abcdef", Stdout: io.Discard, Stderr: io.Discard, serialBase: serial,
		})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Exec: exit %d, %v", res.ExitCode, err)
		}
		return time.Since(start), first
	}
	session(false, 0) // warm: the store and its stat cache exist
	var serial, overlap, serialFirst, overlapFirst []float64
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	for i := 0; b.Loop(); i++ {
		for _, s := range []bool{i%2 == 0, i%2 != 0} {
			total, first := session(s, i)
			if s {
				serial, serialFirst = append(serial, ms(total)), append(serialFirst, ms(first))
			} else {
				overlap, overlapFirst = append(overlap, ms(total)), append(overlapFirst, ms(first))
			}
		}
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(serial), "serial-ms")
	b.ReportMetric(med(overlap), "overlap-ms")
	b.ReportMetric(med(serialFirst), "serial-first-ms")
	b.ReportMetric(med(overlapFirst), "overlap-first-ms")
}
