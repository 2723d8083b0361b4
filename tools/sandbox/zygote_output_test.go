package sandbox_test

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestZygoteOutputThroughFullPipe: a command whose output fills the pipe
// before the runner reads it (1.9 MB, read only after 300 ms) writes all
// of it and exits 0, with every mode and layer. The pipe the runner makes
// is non-blocking on its side (Go's poller); the command must get it
// blocking, as a shell's stdout is, or its writes fail with EAGAIN once
// the pipe is full (seq: write error, exit 1, output cut).
func TestZygoteOutputThroughFullPipe(t *testing.T) {
	sets := layerSets()
	sets["off"] = nil
	for name, layers := range sets {
		t.Run(name, func(t *testing.T) {
			requireLayers(t, layers)
			pol := sandbox.Policy{WorkTree: t.TempDir(), Layers: layers, ScratchDir: t.TempDir()}
			if layers == nil {
				pol.Mode = sandbox.ModeOff
			}
			sb, err := sandbox.New(pol)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			p, err := sb.Start(t.Context(), []string{"sh", "-c", "seq 1 300000; echo rc=$?"}, pol.WorkTree, pathEnv(), sandbox.Stdio{Stdout: pw, Stderr: pw})
			pw.Close()
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			copied := make(chan struct{})
			go func() {
				time.Sleep(300 * time.Millisecond) // the pipe (64 KiB) is full by now
				_, _ = io.Copy(&out, pr)
				close(copied)
			}()
			code, err := p.Wait()
			<-copied
			if err != nil || code != 0 || !strings.HasSuffix(out.String(), "\n299999\n300000\nrc=0\n") || out.Len() != 1_988_900 {
				tail := out.String()[max(0, out.Len()-200):]
				t.Errorf("exit %d (%v), %d bytes, ending %q; want exit 0, 1988900 bytes ending in rc=0", code, err, out.Len(), tail)
			}
		})
	}
}
