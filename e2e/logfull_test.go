package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestEventLogDiskFull: the event log (--events) is on a 32 KiB tmpfs
// and the model's write call carries 60 KB, so its tool.started line does
// not fit. The writer cuts the partial line back: the log holds only
// complete, valid lines with gapless seq and ends in run.finished (error,
// exit 3) naming the full disk; the run stopped there (no second model
// call); stderr says what failed and what to do; result.json and
// summary.md (on another disk) say the same; nothing panicked. It needs
// unprivileged user and mount namespaces (unshare -rm), else it is
// skipped saying so.
func TestEventLogDiskFull(t *testing.T) {
	t.Parallel()
	needMountNamespace(t)
	spec, repo := smallRepo(t)
	big, _ := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("all work and no play\n", 3_000)})
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", string(big))}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply(),
	)
	logDir, save, out, tmp := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "out"), t.TempDir()
	cmd := onTmpfs(t, logDir, "32k", save, "exec", spec, "--out", out, "--events", filepath.Join(logDir, "events.jsonl"), "--base-url", srv.URL())
	cmd.Dir = repo
	cmd.Env = append(cmd.Env, "OPENAI_API_KEY=sk-test-0123456789abcdef", "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	code := tmpfsExit(t, cmd.Run(), stderr.String())
	if code != 3 {
		t.Errorf("exit %d, want 3\n%s", code, stderr.String())
	}
	msg := "the event log could not be written, so the run was stopped"
	if s := stderr.String(); !strings.Contains(s, msg) || !strings.Contains(s, "no space left on device") || strings.Contains(s, "panic") {
		t.Errorf("stderr does not say the log filled up:\n%s", s)
	}
	data, err := os.ReadFile(filepath.Join(save, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("events.jsonl ends in a half line:\n%s", data[max(0, len(data)-300):])
	}
	recs := readEvents(t, filepath.Join(save, "events.jsonl")) // schema, gapless seq, run.finished last
	fin := finished(t, recs)
	if fin.Status != event.StatusError || fin.ExitCode != 3 || fin.Error == nil || !strings.Contains(fin.Error.Message, msg) ||
		!strings.Contains(fin.Error.Message, "no space left on device") {
		t.Errorf("run.finished %+v", fin)
	}
	for _, r := range recs {
		if r.Type == "tool.started" {
			t.Errorf("the tool.started line that did not fit is in the log")
		}
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1: the run went on after its log failed", n)
	}
	var result event.RunFinished
	if data, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || json.Unmarshal(data, &result) != nil ||
		result.ExitCode != 3 {
		t.Errorf("result.json (%v): %s", err, data)
	}
	if md, err := os.ReadFile(filepath.Join(out, "summary.md")); err != nil || !strings.Contains(string(md), "no space left on device") {
		t.Errorf("summary.md (%v):\n%s", err, md)
	}
	if left := dirEntries(tmp); len(left) > 0 {
		t.Errorf("temp files left in TMPDIR: %v", left)
	}
}
