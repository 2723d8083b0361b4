package event

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
)

func mustValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWriterGolden(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, "run-1", WithClock(fixedClock()))
	for _, p := range sampleRun() {
		if err := w.Emit(p); err != nil {
			t.Fatalf("Emit(%s): %v", p.EventType(), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mustValidator(t).ValidateLog(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), `{"v":1,"seq":1,"time":"2026-01-02T03:04:05.25Z","run_id":"run-1","type":"run.started","task":"fix-tests"`) {
		t.Errorf("envelope not first or payload not flattened: %.120s", buf.String())
	}
	golden.Check(t, filepath.Join("testdata", "sample.jsonl"), buf.Bytes())
}

func TestWriterConcurrentSeq(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	w, err := Create(path, "run-c")
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := w.Emit(Text{Step: g + 1, Text: strings.Repeat("x", i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got := w.Seq(); got != goroutines*each {
		t.Errorf("Seq() = %d, want %d", got, goroutines*each)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// ValidateLog checks seq is 1, 2, … in file order.
	if err := mustValidator(t).ValidateLog(data); err != nil {
		t.Fatal(err)
	}
}

// flushRecorder records what was flushed: a line must be flushed as soon as
// it is emitted.
type flushRecorder struct {
	bw      *bufio.Writer
	out     bytes.Buffer
	flushes int
}

func (f *flushRecorder) Write(p []byte) (int, error) { return f.bw.Write(p) }
func (f *flushRecorder) Flush() error                { f.flushes++; return f.bw.Flush() }

func TestWriterFlushesEachLine(t *testing.T) {
	fr := &flushRecorder{}
	fr.bw = bufio.NewWriterSize(&fr.out, 1<<16)
	w := NewWriter(fr, "run-f")
	for i := 1; i <= 3; i++ {
		if err := w.Emit(StepStarted{Step: i}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(fr.out.String(), "\n"); got != i {
			t.Fatalf("after %d emits, %d lines reached the underlying writer", i, got)
		}
	}
}

func TestWriterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewWriter(f, "run-x")
	if err := w.Emit(RunFinished{Status: StatusCancelled, ExitCode: 130, Error: &RunError{Class: "cancelled", Message: "interrupted"}}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if err := w.Emit(StepStarted{Step: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Emit after Close = %v, want ErrClosed", err)
	}
	// The caller still owns the file.
	if _, err := f.WriteString(""); err != nil {
		t.Errorf("NewWriter's Close closed the caller's file: %v", err)
	}
	data, _ := os.ReadFile(path)
	if err := mustValidator(t).ValidateLog(data); err != nil {
		t.Fatal(err)
	}
}

func TestWriterCloseOnPipe(t *testing.T) {
	r, wp, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := NewWriter(wp, "run-p")
	if err := w.Close(); err != nil {
		t.Errorf("Close on a pipe (stdout) = %v, want nil", err)
	}
	wp.Close()
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter(&bytes.Buffer{}, "r")
	if err := w.Emit(nil); !errors.Is(err, ErrNilPayload) {
		t.Errorf("Emit(nil) = %v", err)
	}
	bad := ToolCompleted{Metadata: map[string]any{"f": func() {}}}
	if err := w.Emit(bad); err == nil {
		t.Error("Emit of an unencodable payload succeeded")
	}
	if w.Seq() != 0 {
		t.Errorf("failed emits consumed seq: %d", w.Seq())
	}
	fw := NewWriter(failWriter{}, "r")
	if err := fw.Emit(StepStarted{Step: 1}); !errors.Is(err, errBoom) {
		t.Errorf("write error = %v, want errBoom", err)
	}
}

var errBoom = errors.New("boom")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBoom }

func TestMulti(t *testing.T) {
	var a, b bytes.Buffer
	wa, wb := NewWriter(&a, "r"), NewWriter(&b, "r")
	m := Multi(wa, nil, NewWriter(failWriter{}, "r"), wb)
	err := m.Emit(StepStarted{Step: 1})
	if !errors.Is(err, errBoom) {
		t.Errorf("Multi error = %v, want errBoom", err)
	}
	if a.Len() == 0 || b.Len() == 0 {
		t.Error("a sink after a failing one did not get the event")
	}
	if err := (Discard{}).Emit(StepStarted{Step: 1}); err != nil {
		t.Error(err)
	}
}

func BenchmarkWriterEmit(b *testing.B) {
	var buf bytes.Buffer
	w := NewWriter(&buf, "bench", WithRedactor(NewRedactor([]string{"OPENAI_API_KEY=sk-bench-0123456789abcdef"})))
	p := ToolCompleted{Step: 1, CallID: "c", Tool: "bash", Output: strings.Repeat("some output line\n", 200), DurationMS: 3}
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := w.Emit(p); err != nil {
			b.Fatal(err)
		}
	}
}
