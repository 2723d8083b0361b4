package event

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHelperWriteForever is not a test: run as a child process by
// TestKilledWriterLeavesReadableLog, it emits events until killed.
func TestHelperWriteForever(t *testing.T) {
	path := os.Getenv("EVENT_HELPER_LOG")
	if path == "" {
		return // only meaningful as the child process
	}
	w, err := Create(path, "run-killed")
	if err != nil {
		os.Exit(2)
	}
	big := strings.Repeat("output line\n", 2000)
	for i := 1; ; i++ {
		_ = w.Emit(ToolCompleted{Step: 1, CallID: "c", Tool: "bash", Output: big, DurationMS: int64(i)})
	}
}

// TestKilledWriterLeavesReadableLog kills (SIGKILL, no cleanup) a process
// in the middle of writing and reads its log back: every complete line
// parses and validates; at most a truncated tail is dropped.
func TestKilledWriterLeavesReadableLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperWriteForever$")
	cmd.Env = append(os.Environ(), "EVENT_HELPER_LOG="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for { // wait until a few lines are down; no timing assertions
		if fi, err := os.Stat(path); err == nil && fi.Size() > 200_000 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("helper exited early: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil {
		t.Log("the killed writer exited without an error")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadLog after kill: %v", err)
	}
	if len(recs) < 2 {
		t.Fatalf("only %d records", len(recs))
	}
	complete := data[:bytes.LastIndexByte(data, '\n')+1]
	if err := mustValidator(t).ValidateLog(complete); err != nil {
		t.Fatal(err)
	}
}
