package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkSearch compares grep, glob and list with the previous
// implementation (walk_oracle_test.go) and with ripgrep, in the same run:
//
//	go test -run '^$' -bench Search -benchtime 5x ./tools/
//
// Trees: "generated" (25,000 files of 0.5-8 KiB in 2,525 directories, a
// git repository) and "goroot" ($(go env GOROOT)/src). Variants: new-j1
// and new-j2 (the engine with 1 and 2 workers), previous, and rg-j1, rg-j2
// (ripgrep with -j1/-j2, run as a process per operation, output to a
// pipe). cpu-ms/op is user+system CPU: the process's own for new and
// previous, the child's for rg.
func BenchmarkSearch(b *testing.B) {
	rg, _ := exec.LookPath("rg")
	trees := map[string]string{"generated": ""}
	if out, err := exec.CommandContext(b.Context(), "go", "env", "GOROOT").Output(); err == nil {
		trees["goroot"] = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	for _, name := range []string{"generated", "goroot"} {
		dir, ok := trees[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			if dir == "" {
				dir = b.TempDir()
				genBenchTree(b, dir, 25000)
			}
			for _, op := range benchOps(name) {
				b.Run(op.name, func(b *testing.B) { runBenchOp(b, dir, rg, op) })
			}
		})
	}
}

// benchOp is one operation: a tool call and the ripgrep command for it.
type benchOp struct {
	name   string
	tool   string
	params any
	rgArgs []string
}

func benchOps(tree string) []benchOp {
	hit := "MARKER_[0-9]+"
	if tree == "goroot" {
		hit = `Deprecated: Use \w+\.`
	}
	return []benchOp{
		{"grep-full", "grep", GrepParams{Pattern: "zqxj_nomatch"}, []string{"zqxj_nomatch"}},
		{"grep-regex", "grep", GrepParams{Pattern: `zq[xy]+j\d+`}, []string{`zq[xy]+j\d+`}},
		{"grep-fold", "grep", GrepParams{Pattern: "(?i)zqxj_nomatch"}, []string{"-i", "zqxj_nomatch"}},
		{"grep-include", "grep", GrepParams{Pattern: "zqxj_nomatch", Include: "*.go"}, []string{"-g", "*.go", "zqxj_nomatch"}},
		{"grep-matches", "grep", GrepParams{Pattern: hit}, []string{hit}},
		{"glob", "glob", GlobParams{Pattern: "**/*.go"}, []string{"--files", "-g", "*.go"}},
		{"list", "list", ListParams{}, []string{"--files"}},
	}
}

func runBenchOp(b *testing.B, dir, rg string, op benchOp) {
	b.Helper()
	raw, err := json.Marshal(op.params)
	if err != nil {
		b.Fatal(err)
	}
	tl := tool(b, Env{WorkTree: dir}, op.tool)
	for _, j := range []int{1, 2} {
		b.Run(fmt.Sprintf("new-j%d", j), func(b *testing.B) {
			ctx := withWalkWorkers(b.Context(), j)
			cpu := selfCPU()
			for b.Loop() {
				if _, err := tl.Run(ctx, Call{ID: "c", Input: raw}); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, selfCPU()-cpu)
		})
	}
	b.Run("previous", func(b *testing.B) {
		cpu := selfCPU()
		for b.Loop() {
			previousOp(dir, op)
		}
		reportCPU(b, selfCPU()-cpu)
	})
	for _, j := range []int{1, 2} {
		b.Run(fmt.Sprintf("rg-j%d", j), func(b *testing.B) {
			if rg == "" {
				b.Skip("ripgrep (rg) is not installed")
			}
			args := append([]string{fmt.Sprintf("-j%d", j), "--hidden", "--no-require-git", "-g", "!.git", "-n", "--no-messages"}, op.rgArgs...)
			var cpu float64
			for b.Loop() {
				cmd := exec.CommandContext(b.Context(), rg, args...)
				cmd.Dir = dir
				var out bytes.Buffer
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
					b.Fatalf("rg %v: %v", args, err)
				}
				cpu += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
			}
			reportCPU(b, cpu)
		})
	}
}

func previousOp(dir string, op benchOp) {
	switch p := op.params.(type) {
	case GrepParams:
		oracleGrep(dir, ".", p.Pattern, p.Include)
	case GlobParams:
		oracleGlob(dir, ".", p.Pattern)
	case ListParams:
		oracleList(dir, ".")
	}
}

func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func reportCPU(b *testing.B, seconds float64) {
	b.Helper()
	b.ReportMetric(seconds*1e3/float64(b.N), "cpu-ms/op")
}

// genBenchTree writes n source-like files of 0.5-8 KiB (.go, .txt, .md,
// .c) in 25×100 directories, one in 250 holding a MARKER_ line, plus a
// .gitignore ignoring *.o (with 200 .o files), as a git repository.
func genBenchTree(b *testing.B, root string, n int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	lines := []string{
		"func (s *Server) handle(w http.ResponseWriter, r *http.Request) error {\n",
		"\treturn fmt.Errorf(\"open %s: %w\", name, err)\n",
		"// the quick brown fox jumps over the lazy dog 0123456789\n",
		"\tfor i := 0; i < len(items); i++ { total += items[i].size }\n",
	}
	exts := []string{".go", ".go", ".txt", ".md", ".c"}
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%25), fmt.Sprintf("s%02d", (i/25)%100), fmt.Sprintf("f%05d%s", i, exts[i%len(exts)]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		for range 8 + r.IntN(120) {
			buf.WriteString(lines[r.IntN(len(lines))])
		}
		if i%250 == 7 {
			fmt.Fprintf(&buf, "MARKER_%d\n", i)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 200 {
		writeGen(b, root, fmt.Sprintf("d%02d/obj%03d.o", i%25, i), []byte("zqxj_nomatch\n"))
	}
	writeGen(b, root, ".gitignore", []byte("*.o\n"))
	if out, err := exec.CommandContext(b.Context(), "git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
}
