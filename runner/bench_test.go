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
	"github.com/seed43ef5acb/runner/tools/permission"
)

// sessionSteps is the length of one benchmarked session.
const sessionSteps = 40

// makeRepo writes n small Go files in 20 directories.
func makeRepo(b testing.TB, n int) string {
	b.Helper()
	dir := b.TempDir()
	body := strings.Repeat("// filler line for the benchmark repository\n", 20)
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%20))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		name := filepath.Join(sub, fmt.Sprintf("file%04d.go", i))
		src := fmt.Sprintf("package p\n\n// Func%04d is file %d's symbol.\nfunc Func%04d() {}\n", i, i, i) + body
		if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
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

// stepCall is the tool call of step i of a benchmarked session: list,
// read and write in turn, and with search also glob and grep over the
// repository.
func stepCall(i int, search bool) (name, args string) {
	n := 3
	if search {
		n = 5
	}
	dir := fmt.Sprintf("pkg%02d", i%20)
	switch i % n {
	case 0:
		return "list", `{"path":"` + dir + `"}`
	case 1:
		return "read", fmt.Sprintf(`{"path":"%s/file%04d.go"}`, dir, (i*37%50)*20+i%20)
	case 2:
		return "write", fmt.Sprintf(`{"path":"%s/new%04d.go","content":"package p\n"}`, dir, i)
	case 3:
		return "glob", `{"pattern":"**/*.go","path":"` + dir + `"}`
	default:
		return "grep", fmt.Sprintf(`{"pattern":"Func%04d\\(","path":"%s"}`, (i*53%50)*20+i%20, dir)
	}
}

// builtinTools are the real built-in tools behind the permission guard,
// with read, edit and the search tools allowed.
func builtinTools(root string) []tools.Tool {
	rs := permission.Ruleset{
		{Permission: permission.Read, Pattern: "*", Action: permission.Allow},
		{Permission: permission.Edit, Pattern: "**", Action: permission.Allow},
	}
	return tools.GuardAll(tools.Builtins(tools.Env{WorkTree: root}), rs, root)
}

// instantModel answers instantly from prebuilt events: a tool call per
// step, then a final text. It optionally records requests.
type instantModel struct {
	replies [][]llm.Event
	mu      sync.Mutex
	n       int
	record  func(llm.Request)
}

func newInstantModel(steps int, search bool) *instantModel {
	m := &instantModel{}
	for i := range steps - 1 {
		name, args := stepCall(i, search)
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
// with an instant model and minimal tools on a 1,000-file repository; no
// snapshots. Goal: under 5 ms per step.
func BenchmarkStepOverhead(b *testing.B) {
	root := makeRepo(b, 1000)
	benchSteps(b, root, repoTools(root), false)
}

// BenchmarkStepBuiltinTools is BenchmarkStepOverhead with the real
// built-in tools behind the permission guard, glob and grep included (so
// it counts the tools' own work on the repository too).
func BenchmarkStepBuiltinTools(b *testing.B) {
	root := makeRepo(b, 1000)
	benchSteps(b, root, builtinTools(root), true)
}

func benchSteps(b *testing.B, root string, ts []tools.Tool, search bool) {
	b.Helper()
	b.ReportAllocs()
	start, cpu := time.Now(), cpuTime()
	for b.Loop() {
		cfg := testConfig(newInstantModel(sessionSteps, search), event.NewWriter(io.Discard, "bench"), ts...)
		cfg.WorkTree = root
		res, err := Run(b.Context(), cfg)
		if err != nil || res.Status != event.StatusSuccess || res.Steps != sessionSteps {
			b.Fatalf("run: %v %+v", err, res)
		}
	}
	steps := time.Duration(b.N * sessionSteps)
	b.ReportMetric(float64((time.Since(start)/steps).Microseconds())/1000, "ms/step")
	b.ReportMetric(float64(((cpuTime()-cpu)/steps).Microseconds())/1000, "cpu-ms/step")
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
	b.Helper()
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
	ts := builtinTools(root)
	var stats prefixStats
	for b.Loop() {
		stats.prev = nil
		m := newInstantModel(sessionSteps, true)
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
// the real provider sends. The body has "messages" before "tools", so each
// body's tool list (about 7 KB with the built-in tools) is not part of the
// next body's prefix and these figures are lower; provider prompt caches
// work on the rendered prompt (tools first), not on the JSON body, so the
// cache-order figures are the ones that count.
func BenchmarkRequestPrefixWire(b *testing.B) {
	root := makeRepo(b, 1000)
	ts := builtinTools(root)
	var replies []llmtest.Reply
	for i := range sessionSteps - 1 {
		name, args := stepCall(i, true)
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

// BenchmarkStreamText feeds a text reply of size bytes to a turn in
// word-sized deltas, as providers stream it. ns/byte stays flat from
// 64 KiB to 1 MiB: the text grows in O(n), not O(n²) (with Text +=
// delta it was 146,677 ns/byte at 1 MiB, 3,921 at 64 KiB).
func BenchmarkStreamText(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			words := strings.Fields(strings.Repeat("stream the reply word by word ", size/30))
			s := &Session{}
			b.ReportAllocs()
			for b.Loop() {
				t := newTurn(1, false)
				s.handle(b.Context(), t, llm.Event{Type: llm.EventTextStart, ID: "t"})
				for _, w := range words {
					s.handle(b.Context(), t, llm.Event{Type: llm.EventTextDelta, ID: "t", Delta: w + " "})
				}
				if len(t.part(PartText, "t").Text) < size*9/10 {
					b.Fatal("the text was not assembled")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/byte")
		})
	}
}
