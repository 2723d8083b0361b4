package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSearch compares grep, glob and list with ripgrep and with the
// previous implementation (walk_oracle_test.go), in the same run:
//
//	go test -run '^$' -bench Search -benchtime 10x ./tools/
//
// Trees: "generated" (25,000 files of 0.5-8 KiB in 2,525 directories, a
// git repository) and "goroot" ($(go env GOROOT)/src). Variants: j1 and
// j2 run, in each iteration and in alternating order, ripgrep with -j1 or
// -j2 (a process per operation, output to a pipe) and our tool with
// GOMAXPROCS 1 or 2 (its walk uses GOMAXPROCS workers), so both see the
// same load; ns/op and cpu-ms/op are ours, rg-ms/op and rg-cpu-ms/op
// ripgrep's, x-rg the ratio of the mean wall times, x-rg-median the median
// of the per-iteration ratios and cpu-x-rg the CPU ratio. cpu is user+
// system time: the process's own for ours and previous, the child's for rg.
// "previous" runs the old sequential implementation alone. Without rg the
// j variants run ours only.
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
	ours := func(procs int) (wall, cpu float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		c0, t0 := selfCPU(), time.Now()
		if _, err := tl.Run(b.Context(), Call{ID: "c", Input: raw}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0).Seconds(), selfCPU() - c0
	}
	for _, j := range []int{1, 2} {
		b.Run(fmt.Sprintf("j%d", j), func(b *testing.B) {
			var s benchSums
			i := 0
			for b.Loop() {
				var ow, oc, rw, rc float64
				if i%2 == 0 {
					ow, oc = ours(j)
				}
				if rg != "" {
					rw, rc = runRg(b, rg, dir, j, op.rgArgs)
				}
				if i%2 == 1 {
					ow, oc = ours(j)
				}
				s.add(ow, oc, rw, rc)
				i++
			}
			s.report(b, rg != "")
		})
	}
	b.Run("previous", func(b *testing.B) {
		cpu := selfCPU()
		for b.Loop() {
			previousOp(dir, op)
		}
		b.ReportMetric((selfCPU()-cpu)*1e3/float64(b.N), "cpu-ms/op")
	})
}

// runRg runs ripgrep as the tools would be asked (hidden files, git's
// ignore rules without needing a repository, .git skipped, line numbers)
// and returns its wall and CPU seconds.
func runRg(b *testing.B, rg, dir string, j int, rgArgs []string) (wall, cpu float64) {
	b.Helper()
	args := append([]string{fmt.Sprintf("-j%d", j), "--hidden", "--no-require-git", "-g", "!.git", "-n", "--no-messages"}, rgArgs...)
	cmd := exec.CommandContext(b.Context(), rg, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		b.Fatalf("rg %v: %v", args, err)
	}
	return time.Since(t0).Seconds(), (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}

// benchSums accumulates the timings of one variant.
type benchSums struct {
	ow, oc, rw, rc float64
	ratios         []float64
}

func (s *benchSums) add(ow, oc, rw, rc float64) {
	s.ow, s.oc, s.rw, s.rc = s.ow+ow, s.oc+oc, s.rw+rw, s.rc+rc
	if rw > 0 {
		s.ratios = append(s.ratios, ow/rw)
	}
}

func (s *benchSums) report(b *testing.B, withRg bool) {
	b.Helper()
	n := float64(b.N)
	b.ReportMetric(s.ow*1e9/n, "ns/op")
	b.ReportMetric(s.oc*1e3/n, "cpu-ms/op")
	if !withRg || s.rw == 0 {
		return
	}
	b.ReportMetric(s.rw*1e3/n, "rg-ms/op")
	b.ReportMetric(s.rc*1e3/n, "rg-cpu-ms/op")
	b.ReportMetric(s.ow/s.rw, "x-rg")
	slices.Sort(s.ratios)
	b.ReportMetric(s.ratios[len(s.ratios)/2], "x-rg-median")
	if s.rc > 0 {
		b.ReportMetric(s.oc/s.rc, "cpu-x-rg")
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
