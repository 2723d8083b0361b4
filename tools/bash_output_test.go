package tools

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestBashLongOutputIsNotAWriteError runs a command that writes far more
// than a pipe holds (64 KiB) as fast as it can, in every sandbox mode the
// machine has: its stdout must block while the runner drains it, never
// fail with EAGAIN ("seq: write error: Resource temporarily unavailable",
// exit 1, which failed a passing check), and the whole output must reach
// the output file while the model gets the head and the tail.
func TestBashLongOutputIsNotAWriteError(t *testing.T) {
	t.Parallel()
	const lines = 200_000 // seq 1 200000: 1,288,895 bytes
	want := 0
	for i := 1; i <= lines; i++ {
		want += len(fmt.Sprint(i)) + 1
	}
	modes := map[string]sandbox.Policy{
		"off": {Mode: sandbox.ModeOff}, "auto": {Mode: sandbox.ModeAuto},
		"auto, a helper per command": {Mode: sandbox.ModeAuto, PerCommandHelper: true},
	}
	for name, pol := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := bashEnv(t)
			pol.WorkTree = env.WorkTree
			sb, err := sandbox.New(pol)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sb.Close() })
			if sb.Err() != nil {
				t.Skipf("no sandbox layer on this machine: %v", sb.Err())
			}
			env.Sandbox = sb
			b := tool(t, env, "bash")
			for range 3 { // the second and later commands go through the warm zygote
				res := run(t, b, BashParams{Command: fmt.Sprintf("seq 1 %d; echo \"seq=$?\" >&2", lines)})
				if res.IsError || res.Metadata["exit_code"] != 0 {
					t.Fatalf("exit %v, output tail %q", res.Metadata["exit_code"], lastBytes(res.Output, 300))
				}
				if !strings.HasSuffix(res.Output, fmt.Sprintf("%d\nseq=0\n", lines)) || !res.Truncated {
					t.Fatalf("the model's text must end with the last line and seq=0 (truncated %v): %q", res.Truncated, lastBytes(res.Output, 300))
				}
				if launch := res.Metadata["sandbox_launch"]; !pol.PerCommandHelper && launch != string(sandbox.LaunchZygote) {
					t.Fatalf("launch %v: this case is about the zygote", launch)
				}
				path, _ := res.Metadata["output_path"].(string)
				full, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("output file %q: %v", path, err)
				}
				if len(full) != want+len("seq=0\n") {
					t.Fatalf("output file holds %d bytes, want %d", len(full), want+len("seq=0\n"))
				}
			}
		})
	}
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestBashOutputFileIsBounded: a command that prints without
// end (here 3 MiB of zeros against a 1 MiB bound) fills the output file,
// which the runner writes outside the sandbox, only up to its bound; the
// model still gets the real tail, and the marker says the file holds the
// first bytes only. Without the bound, `cat /dev/zero` filled the out
// dir's disk for as long as the timeout let it.
func TestBashOutputFileIsBounded(t *testing.T) {
	t.Parallel()
	env := bashEnv(t)
	env.MaxOutputFileBytes = 1 << 20
	b := tool(t, env, "bash")
	res := run(t, b, BashParams{Command: "head -c 3145728 /dev/zero; echo; echo the-end"})
	if res.IsError || res.Metadata["exit_code"] != 0 || !res.Truncated {
		t.Fatalf("exit %v truncated %v: %q", res.Metadata["exit_code"], res.Truncated, lastBytes(res.Output, 300))
	}
	path, _ := res.Metadata["output_path"].(string)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("output file %q: %v", path, err)
	}
	if st.Size() != 1<<20 {
		t.Errorf("output file holds %d bytes, want the bound %d", st.Size(), 1<<20)
	}
	if !strings.HasSuffix(res.Output, "\nthe-end\n") || !strings.Contains(res.Output, fmt.Sprintf("the first %d bytes of the output are in %s", 1<<20, path)) {
		t.Errorf("the model's text: %q … %q", res.Output[:min(len(res.Output), 200)], lastBytes(res.Output, 400))
	}
}
