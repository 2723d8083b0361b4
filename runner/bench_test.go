package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// benchSteps is the length of one benchmarked session.
const benchSteps = 40

// makeRepo writes n small Go files in 20 directories.
func makeRepo(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	body := strings.Repeat("// filler line for the benchmark repository\n", 20)
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%20))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		name := filepath.Join(sub, fmt.Sprintf("file%04d.go", i))
		if err := os.WriteFile(name, []byte("package p\n"+body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// repoTools are minimal read, list and write tools over a directory.
func repoTools(root string) []tools.Tool {
	path := func(c tools.Call) string {
		var in struct{ Path string }
		_ = json.Unmarshal(c.Input, &in)
		return filepath.Join(root, filepath.FromSlash(in.Path))
	}
	read := &fakeTool{name: "read", run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		data, err := os.ReadFile(path(c))
		if err != nil {
			return errorResult(err.Error()), nil
		}
		return tools.Result{Output: string(data)}, nil
	}}
	list := &fakeTool{name: "list", run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		entries, err := os.ReadDir(path(c))
		if err != nil {
			return errorResult(err.Error()), nil
		}
		var sb strings.Builder
		for _, e := range entries {
			sb.WriteString(e.Name() + "\n")
		}
		return tools.Result{Output: sb.String()}, nil
	}}
	write := &fakeTool{name: "write", run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		if err := os.WriteFile(path(c), []byte("package p\n"), 0o600); err != nil {
			return errorResult(err.Error()), nil
		}
		return tools.Result{Output: "ok", Touched: []string{"x"}}, nil
	}}
	return []tools.Tool{read, list, write}
}

// stepCall is the tool call of step i of a benchmarked session.
func stepCall(i int) (name, args string) {
	switch i % 3 {
	case 0:
		return "list", fmt.Sprintf(`{"path":"pkg%02d"}`, i%20)
	case 1:
		return "read", fmt.Sprintf(`{"path":"pkg%02d/file%04d.go"}`, i%20, i*7%1000/20*20+i%20)
	default:
		return "write", fmt.Sprintf(`{"path":"pkg%02d/new%04d.go"}`, i%20, i)
	}
}

// instantModel answers instantly from prebuilt events: a tool call per
// step, then a final text. It optionally records requests.
type instantModel struct {
	replies [][]llm.Event
	mu      sync.Mutex
	n       int
	record  func(llm.Request)
}

func newInstantModel(steps int) *instantModel {
	m := &instantModel{}
	for i := range steps - 1 {
		name, args := stepCall(i)
		m.replies = append(m.replies, reply(text("Next I look at "+name+"."), call(fmt.Sprintf("call_%d", i), name, args),
			finish(llm.FinishToolCalls, 1000, 50)))
	}
	m.replies = append(m.replies, reply(text("Done."), finish(llm.FinishStop, 1000, 5)))
	return m
}

func (m *instantModel) Stream(_ context.Context, req llm.Request) iter.Seq[llm.Event] {
	m.mu.Lock()
	r := m.replies[m.n%len(m.replies)]
	m.n++
	m.mu.Unlock()
	if m.record != nil {
		m.record(req)
	}
	return func(yield func(llm.Event) bool) {
		for _, ev := range r {
			if !yield(ev) {
				return
			}
		}
	}
}

// BenchmarkStepOverhead measures the runner's own cost per step (request
// building, stream processing, tool dispatch, events to a JSONL writer)
// with an instant model on a 1,000-file repository; no snapshots. Goal:
// under 5 ms per step.
func BenchmarkStepOverhead(b *testing.B) {
	root := makeRepo(b, 1000)
	ts := repoTools(root)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		cfg := testConfig(newInstantModel(benchSteps), event.NewWriter(io.Discard, "bench"), ts...)
		cfg.WorkTree = root
		res, err := Run(b.Context(), cfg)
		if err != nil || res.Status != event.StatusSuccess || res.Steps != benchSteps {
			b.Fatalf("run: %v %+v", err, res)
		}
	}
	perStep := time.Since(start) / time.Duration(b.N*benchSteps)
	b.ReportMetric(float64(perStep.Microseconds())/1000, "ms/step")
}

// prefixStats accumulates how much of each request starts with the bytes
// of the previous one.
type prefixStats struct {
	prev          []byte
	reuse, share  float64 // sums of per-request ratios
	pairs         int
	common, total int64
}

// add records one serialized request. reuse is the share of the previous
// request found again as this request's prefix (1.0 when the history is
// append-only); share is the share of this request's bytes that equal the
// previous request's prefix (what a provider prompt cache can serve).
func (p *prefixStats) add(cur []byte) {
	if p.prev != nil {
		n := commonPrefix(p.prev, cur)
		p.reuse += float64(n) / float64(len(p.prev))
		p.share += float64(n) / float64(len(cur))
		p.common += int64(n)
		p.total += int64(len(cur))
		p.pairs++
	}
	p.prev = cur
}

func (p *prefixStats) report(b *testing.B) {
	b.ReportMetric(p.reuse/float64(p.pairs), "prefix-reuse")
	b.ReportMetric(p.share/float64(p.pairs), "prefix-share")
	b.ReportMetric(float64(p.common)/float64(p.total), "prefix-bytes")
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// cacheOrder serializes a request in the order providers cache a prompt:
// tools, then messages (system first); per-call settings such as the
// tool choice are not part of the cached prompt.
func cacheOrder(req llm.Request) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	_ = enc.Encode(req.Tools)
	for _, m := range req.Messages {
		_ = enc.Encode(m)
	}
	return buf.Bytes()
}

// BenchmarkRequestPrefix reports the request-prefix stability of a
// 40-step session (see prefixStats.add), serialized in cache order. Goal:
// ≥ 0.95.
func BenchmarkRequestPrefix(b *testing.B) {
	root := makeRepo(b, 1000)
	ts := repoTools(root)
	var stats prefixStats
	for b.Loop() {
		stats.prev = nil
		m := newInstantModel(benchSteps)
		m.record = func(req llm.Request) { stats.add(cacheOrder(req)) }
		cfg := testConfig(m, event.Discard{}, ts...)
		cfg.WorkTree = root
		if _, err := Run(b.Context(), cfg); err != nil {
			b.Fatal(err)
		}
	}
	stats.report(b)
}

// BenchmarkRequestPrefixWire is BenchmarkRequestPrefix on the HTTP bodies
// the real provider sends (go-openai puts messages before tools, so the
// tool list is the part of each body that is not a prefix).
func BenchmarkRequestPrefixWire(b *testing.B) {
	root := makeRepo(b, 1000)
	ts := repoTools(root)
	var replies []llmtest.Reply
	for i := range benchSteps - 1 {
		name, args := stepCall(i)
		replies = append(replies, llmtest.Turn{Text: "Next I look at " + name + ".",
			ToolCalls: []llmtest.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: name, Arguments: args}}}.Reply())
	}
	replies = append(replies, llmtest.Text("Done."))
	var stats prefixStats
	for b.Loop() {
		srv := llmtest.NewServer(b, replies...)
		p, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", HTTPClient: srv.Client()})
		if err != nil {
			b.Fatal(err)
		}
		cfg := testConfig(p, event.Discard{}, ts...)
		cfg.WorkTree = root
		if res, err := Run(b.Context(), cfg); err != nil || res.Status != event.StatusSuccess {
			b.Fatalf("run: %v %+v", err, res)
		}
		stats.prev = nil
		for _, r := range srv.Requests() {
			stats.add(r.Raw)
		}
	}
	stats.report(b)
}
