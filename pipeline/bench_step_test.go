package pipeline

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

const stepBenchSpec = `version: 1
name: bench
model: gpt-4.1-mini
prompt: Append a line to notes.txt, again and again.
permissions:
  read: allow
  edit:
    "**": allow
  bash:
    "echo *": allow
limits:
  max_steps: 40
`

// BenchmarkBashStepCPU measures the CPU one cheap bash step costs on a
// 25,000-file git work tree: scripted sessions of 4 and of 34 steps, each
// running `echo N >> notes.txt` (a command, so the step's snapshot cannot
// rely on reported paths), in the same run, with the inotify watch (the
// default) and with a full walk per step (the previous behaviour), with
// the sandbox (mode auto: namespaces and Landlock where they work) and
// without it (mode off), to tell the snapshot's share from the sandbox's:
//
//	go test -run '^$' -bench BashStepCPU -benchtime 3x ./pipeline/
//
// cpu-ms/step is (CPU of the 34-step session − CPU of the 4-step one) / 30,
// user+system of this process and its children (the bash processes).
func BenchmarkBashStepCPU(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	repo := filepath.Join(b.TempDir(), "repo")
	genStepTree(b, repo, 25000)
	time.Sleep(2100 * time.Millisecond) // at rest, past the snapshot's racy window, as a checkout is
	specs := map[bool]string{}
	for _, sandboxed := range []bool{true, false} {
		text := stepBenchSpec
		if !sandboxed {
			text += "sandbox:\n  mode: off\n"
		}
		specs[sandboxed] = filepath.Join(b.TempDir(), "task.yaml")
		if err := os.WriteFile(specs[sandboxed], []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, v := range []struct {
		name             string
		watch, sandboxed bool
	}{{"watch", true, true}, {"full-walk", false, true}, {"watch-sandbox-off", true, false}, {"full-walk-sandbox-off", false, false}} {
		watch, spec := v.watch, specs[v.sandboxed]
		b.Run(v.name, func(b *testing.B) {
			prev := snapshotWatch
			snapshotWatch = watch
			defer func() { snapshotWatch = prev }()
			_, _ = sessionCPU(b, spec, repo, 1) // warm: the store and its stat cache exist
			var short, long float64
			walks := 0
			for b.Loop() {
				cpu, _ := sessionCPU(b, spec, repo, 4)
				short += cpu
				cpu, w := sessionCPU(b, spec, repo, 34)
				long += cpu
				walks += w
			}
			n := float64(b.N)
			b.ReportMetric(short/n*1e3, "cpu-ms/4-steps")
			b.ReportMetric(long/n*1e3, "cpu-ms/34-steps")
			b.ReportMetric((long-short)/n*1e3/30, "cpu-ms/step")
			b.ReportMetric(float64(walks)/n, "full-walk-steps/34")
		})
	}
}

// sessionCPU runs one scripted session of n bash steps and returns the CPU
// seconds it took and how many steps' snapshots walked the whole tree.
func sessionCPU(b *testing.B, spec, repo string, n int) (float64, int) {
	b.Helper()
	var replies []llmtest.Reply
	for i := range n {
		replies = append(replies, llmtest.Turn{ToolCalls: []llmtest.ToolCall{
			llmtest.Call("bash", fmt.Sprintf(`{"command":"echo %d >> notes.txt"}`, i)),
		}}.Reply())
	}
	replies = append(replies, llmtest.Turn{Text: "Done."}.Reply())
	srv := llmtest.NewServer(b, replies...)
	out := b.TempDir()
	before := cpuSeconds()
	res, err := Exec(b.Context(), ExecOptions{
		Task: spec, Repo: repo, Out: out, Quiet: true,
		BaseURL: srv.URL(), APIKey: "sk-bench-0123456789abcdef", Stdout: io.Discard, Stderr: io.Discard,
	})
	cpu := cpuSeconds() - before
	if err != nil || res.ExitCode != 0 {
		b.Fatalf("session of %d steps: exit %d, %v", n, res.ExitCode, err)
	}
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	walks := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte(`"type":"patch"`)) && bytes.Contains(line, []byte(`"tracking":"full`)) &&
			!bytes.Contains(line, []byte("final snapshot")) {
			walks++
		}
	}
	return cpu, walks
}

func cpuSeconds() float64 {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	t := self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano()
	return float64(t) / 1e9
}

// genStepTree writes n text files of 0.5-8 KiB in 25×100 directories and
// commits them.
func genStepTree(b *testing.B, root string, n int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789\n")
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%25), fmt.Sprintf("s%02d", (i/25)%100), fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat(line, 8+r.IntN(140)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"}} {
		cmd := exec.CommandContext(b.Context(), "git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
