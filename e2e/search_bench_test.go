package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// searchOp is one search: the tool call a model makes and the rg command
// that answers the same question.
type searchOp struct {
	name, tool, args string
	rg               []string
}

// searchOps are the searches BenchmarkSearchInRun times.
var searchOps = []searchOp{ //nolint:gochecknoglobals // constant list
	{"grep-full", "grep", `{"pattern":"zqxj_nomatch"}`, []string{"zqxj_nomatch"}},
	{"grep-matches", "grep", `{"pattern":"MARKER_[0-9]+"}`, []string{"MARKER_[0-9]+"}},
	{"glob", "glob", `{"pattern":"**/*.go"}`, []string{"--files", "-g", "*.go"}},
}

// searchSpec lets the scripted model read (grep and glob) with the
// default sandbox, as a user's run would.
const searchSpec = `version: 1
name: search
model: gpt-4.1-mini
prompt: Find the markers.
permissions:
  read: allow
`

// BenchmarkSearchInRun times grep and glob as users get them: a scripted
// model asks for each search in a real `runner exec` of the built binary
// on a 25,000-file repository, and the tool's own duration_ms from
// events.jsonl is compared with rg run as a process right after (-j2,
// hidden files, git's ignore rules, .git skipped). Metrics per search:
// ms/op (ours), rg-ms/op and x-rg (the ratio of the sums). Without rg
// only ours is reported.
//
//	go test -run '^$' -bench SearchInRun -benchtime 5x ./e2e/
func BenchmarkSearchInRun(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Log("ripgrep (rg) is not on PATH: reporting the runner's durations without the comparison")
	}
	repo := filepath.Join(b.TempDir(), "repo")
	genSearchTree(b, repo, 25000)
	spec := filepath.Join(b.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(searchSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_CACHE_HOME=" + b.TempDir(),
		"NO_COLOR=1", "OPENAI_API_KEY=sk-test-0123456789abcdef"}
	ours := map[string]float64{}
	theirs := map[string]float64{}
	for b.Loop() {
		var replies []llmtest.Reply
		for i, op := range searchOps {
			replies = append(replies, llmtest.Turn{ToolCalls: []llmtest.ToolCall{
				{ID: fmt.Sprintf("call_%d", i), Name: op.tool, Arguments: op.args}}}.Reply())
		}
		replies = append(replies, llmtest.Turn{Text: "Done."}.Reply())
		srv := llmtest.NewServer(b, replies...)
		out := filepath.Join(b.TempDir(), "out")
		cmd := exec.CommandContext(b.Context(), runnerBin, "exec", spec, "--repo", repo, "--out", out, "--base-url", srv.URL(), "--quiet")
		cmd.Env = env
		if outb, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("runner exec: %v\n%s", err, outb)
		}
		for name, ms := range toolDurations(b, filepath.Join(out, "events.jsonl")) {
			ours[name] += ms
		}
		if rg == "" {
			continue
		}
		for _, op := range searchOps {
			theirs[op.name] += timeRg(b, rg, repo, op.rg)
		}
	}
	n := float64(b.N)
	total, rgTotal := 0.0, 0.0
	for _, op := range searchOps {
		b.ReportMetric(ours[op.name]/n, op.name+"-ms/op")
		total += ours[op.name]
		if rg != "" {
			b.ReportMetric(theirs[op.name]/n, op.name+"-rg-ms/op")
			b.ReportMetric(ours[op.name]/theirs[op.name], op.name+"-x-rg")
			rgTotal += theirs[op.name]
		}
	}
	if rg != "" {
		b.ReportMetric(total/rgTotal, "x-rg")
	}
}

// toolDurations reads the duration_ms of each completed tool call of an
// event log, keyed by the searchOps name its call id points to.
func toolDurations(b *testing.B, path string) map[string]float64 {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	got := map[string]float64{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var env struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			b.Fatalf("events: %v", err)
		}
		if env.Type != "tool.completed" {
			continue
		}
		var tc event.ToolCompleted
		if err := json.Unmarshal([]byte(line), &tc); err != nil {
			b.Fatalf("events: %v", err)
		}
		var i int
		if _, err := fmt.Sscanf(tc.CallID, "call_%d", &i); err != nil || i >= len(searchOps) {
			b.Fatalf("unexpected call %q", tc.CallID)
		}
		got[searchOps[i].name] = float64(tc.DurationMS)
	}
	if len(got) != len(searchOps) {
		b.Fatalf("%d searches completed, want %d:\n%s", len(got), len(searchOps), data)
	}
	return got
}

// timeRg runs rg as the tools search and returns its wall milliseconds.
func timeRg(b *testing.B, rg, dir string, args []string) float64 {
	b.Helper()
	args = append([]string{"-j2", "--hidden", "--no-require-git", "-g", "!.git", "-n", "--no-messages"}, args...)
	cmd := exec.CommandContext(b.Context(), rg, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		b.Fatalf("rg %v: %v", args, err)
	}
	return float64(time.Since(t0).Microseconds()) / 1e3
}

// genSearchTree writes n source-like files of 0.5-8 KiB in 25×100
// directories (one in 250 holding a MARKER_ line) and a .gitignore
// ignoring 200 .o files, as a committed git repository.
func genSearchTree(b *testing.B, root string, n int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	lines := []string{
		"func (s *Server) handle(w http.ResponseWriter, r *http.Request) error {\n",
		"\treturn fmt.Errorf(\"open %s: %w\", name, err)\n",
		"// the quick brown fox jumps over the lazy dog 0123456789\n",
		"\tfor i := 0; i < len(items); i++ { total += items[i].size }\n",
	}
	exts := []string{".go", ".go", ".txt", ".md", ".c"}
	write := func(rel string, data []byte) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		var buf bytes.Buffer
		for range 8 + r.IntN(120) {
			buf.WriteString(lines[r.IntN(len(lines))])
		}
		if i%250 == 7 {
			fmt.Fprintf(&buf, "MARKER_%d\n", i)
		}
		write(fmt.Sprintf("d%02d/s%02d/f%05d%s", i%25, (i/25)%100, i, exts[i%len(exts)]), buf.Bytes())
	}
	for i := range 200 {
		write(fmt.Sprintf("d%02d/obj%03d.o", i%25, i), []byte("zqxj_nomatch\n"))
	}
	write(".gitignore", []byte("*.o\n"))
	for _, args := range [][]string{{"init", "-q"}, {"config", "gc.auto", "0"}, {"config", "maintenance.auto", "false"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "tree"}} {
		cmd := exec.CommandContext(b.Context(), "git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
