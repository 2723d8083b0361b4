package main

import (
	"bytes"
	"os"
	"syscall"
	"testing"
)

// closedPipe is a stdout whose reader left: every write fails as a pipe
// with no reader does.
type closedPipe struct{}

func (closedPipe) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

// TestHelpIntoClosedPipe: `runner exec --help | head -1`, and the other
// commands that print to stdout, end with 0 and say nothing on stderr
// when the reader leaves: it got what it wanted. A CI script with
// pipefail does not fail on it.
func TestHelpIntoClosedPipe(t *testing.T) {
	for _, args := range [][]string{{"exec", "--help"}, {"help", "batch", "run"}, {"--help"}, {"version"}} {
		var stderr bytes.Buffer
		if code := runCLI(t.Context(), args, Streams{Stdout: closedPipe{}, Stderr: &stderr}, nil); code != 0 || stderr.Len() > 0 {
			t.Errorf("runner %v into a closed pipe: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
