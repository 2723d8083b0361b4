package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// hugeSpec appends to a large file with bash (sandbox off: the test is
// about the patch, not the sandbox).
const hugeSpec = `version: 1
name: huge
model: gpt-4.1-mini
prompt: Append "tail" to big.bin.
permissions:
  read: allow
  edit: allow
  bash:
    "printf *": allow
sandbox:
  mode: off
`

// hugeFileSize is the file the agent appends to: 200 MB, sparse.
const hugeFileSize = 200 << 20

// runHuge runs the built binary on a work tree holding a 200 MB sparse
// file to which the agent appends 4 bytes. It returns the out dir, the
// exit code and the process's peak resident memory in bytes (getrusage's
// ru_maxrss, through the peak-memory helper).
func runHuge(t *testing.T) (out string, code int, peak int64) {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(repo, "big.bin")
	if err := os.WriteFile(big, []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, hugeFileSize); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(hugeSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{
			llmtest.Call("bash", `{"command":"printf tail >> big.bin"}`),
			llmtest.Call("write", `{"path":"notes.txt","content":"b\n"}`),
		}}.Reply(),
		llmtest.Turn{Text: "Appended."}.Reply(),
	)
	out = filepath.Join(t.TempDir(), "out")
	cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--repo", repo, "--out", out, "--base-url", srv.URL(), "--quiet")
	cmd.Env = append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	measureRSS(t, cmd)
	outb, err := cmd.CombinedOutput()
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("run runner: %v\n%s", err, outb)
	}
	peak = peakRSS(t, cmd)
	t.Logf("runner output:\n%s", outb)
	return out, code, peak
}

// TestFaultHugeBinaryAppend: a 4-byte append to a 200 MB file is recorded as
// a binary change the patch leaves out (blob ids, sizes), the patch stays
// small and still carries the text change, the summary is written, the
// run is failed with class patch_incomplete (exit 1, not a silent
// success), and the runner's peak memory stays well below the file's size.
func TestFaultHugeBinaryAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("a 200 MB (sparse) file")
	}
	t.Parallel()
	out, code, peak := runHuge(t)
	t.Logf("200 MB file, 4-byte append: runner peak RSS %.1f MB", float64(peak)/(1<<20))
	if code != 1 {
		t.Errorf("exit %d, want 1 (patch incomplete)", code)
	}
	if peak <= 0 || peak >= hugeFileSize/2 {
		t.Errorf("peak RSS %d bytes, want below half the file (%d)", peak, hugeFileSize/2)
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	fin := finished(t, recs)
	if fin.Status != event.StatusFailed || fin.Error == nil || fin.Error.Class != event.ClassPatchIncomplete ||
		!strings.Contains(fin.Error.Message, "big.bin") {
		t.Errorf("run.finished = %+v, want failed, patch_incomplete naming big.bin", fin)
	}
	patches := ofType[event.Patch](t, recs)
	final := patches[len(patches)-1]
	var om *event.Omitted
	for _, f := range final.Files {
		if f.Path == "big.bin" {
			om = f.Omitted
		}
	}
	if om == nil || om.OldSize != hugeFileSize || om.NewSize != hugeFileSize+4 || len(om.OldBlob) != 40 || len(om.NewBlob) != 40 {
		t.Errorf("final patch event files = %+v, want big.bin omitted with sizes and blobs", final.Files)
	}
	patch, err := os.ReadFile(filepath.Join(out, "changes.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if len(patch) > 4096 || !strings.HasPrefix(string(patch), "runner: this patch does NOT carry 1 binary change") ||
		!strings.Contains(string(patch), "+b") {
		t.Errorf("changes.patch (%d bytes) does not name the left-out file and carry notes.txt:\n%.2000s", len(patch), patch)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(summary), "not in the patch") || !strings.Contains(string(summary), "patch_incomplete") {
		t.Errorf("summary.md does not say the change is left out:\n%s", summary)
	}
}

// TestHugeBinaryAppendWithinRaisedLimit: with limits.binary_patch_bytes
// raised to its 256 MiB maximum, a 4-byte append to a 150 MB file is in
// the patch, which git apply takes, and the runner streams it: its peak
// memory stays under 300 MB (it held both sides, deltas and literals at
// once before: 1,256 MB).
func TestHugeBinaryAppendWithinRaisedLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a 150 MB file")
	}
	t.Parallel()
	const size = 150 << 20
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(repo, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Not sparse: blocks of pseudo-random bytes, which deflate cannot
	// shrink, so a literal would be the whole file.
	block := make([]byte, 1<<20)
	x := uint64(88172645463325252)
	for i := 0; i < size/len(block); i++ {
		for j := 0; j < len(block); j += 8 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			for k := range 8 {
				block[j+k] = byte(x >> (8 * k))
			}
		}
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "big")
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(hugeSpec+"limits:\n  binary_patch_bytes: 268435456\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"printf tail >> big.bin"}`)}}.Reply(),
		llmtest.Turn{Text: "Appended."}.Reply(),
	)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--repo", repo, "--isolate", "--out", out, "--base-url", srv.URL(), "--quiet")
	cmd.Env = append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	measureRSS(t, cmd)
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("runner: %v\n%s", err, outb)
	}
	peak := peakRSS(t, cmd)
	t.Logf("150 MB file, 4-byte append, in the patch: runner peak RSS %.1f MB", float64(peak)/(1<<20))
	if peak <= 0 || peak >= 300<<20 {
		t.Errorf("peak RSS %.1f MB, want under 300 MB", float64(peak)/(1<<20))
	}
	patch := filepath.Join(out, "changes.patch")
	if fi, err := os.Stat(patch); err != nil || fi.Size() > 64<<10 {
		t.Fatalf("changes.patch (%v): want the append as a small delta", err)
	}
	gittest.Run(t, repo, "apply", patch)
	// Only the tail is read: reading the whole file here would raise this
	// process's peak RSS, which every child it forks later starts from.
	n, tail := tailOf(t, big, 4)
	if n != size+4 || tail != "tail" {
		t.Errorf("big.bin after git apply: %d bytes ending in %q, want %d ending in tail", n, tail, size+4)
	}
	gittest.Run(t, repo, "apply", "-R", patch)
	if fi, err := os.Stat(big); err != nil || fi.Size() != size {
		t.Errorf("big.bin after git apply -R: %v %v, want %d bytes", fi.Size(), err, size)
	}
}

// tailOf returns the size of the file at path and its last n bytes.
func tailOf(t *testing.T, path string, n int64) (int64, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, min(n, fi.Size()))
	if _, err := f.ReadAt(buf, fi.Size()-int64(len(buf))); err != nil {
		t.Fatal(err)
	}
	return fi.Size(), string(buf)
}
