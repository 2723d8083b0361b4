package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestContinueAfterSIGKILL: a runner killed mid-step (SIGKILL: nothing
// runs after it) leaves a history that is valid up to its last complete
// step; `exec --continue` goes on from there through the real binary, in
// the same work tree, and its patch is the whole change since the first
// run's base.
func TestContinueAfterSIGKILL(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	stall := llmtest.Turn{Text: "Let me think about this for a very long time."}.Reply()
	stall.Stall, stall.StallAfter = true, 200
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"half\n"}`)}}.Reply(),
		stall,
	)
	out1 := filepath.Join(repo, ".runner", "runs", "first")
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", out1, "--base-url", srv.URL(), "--quiet")
	cmd.Dir, cmd.Env = repo, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(srv.Requests()) < 2; {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the runner never made its second call\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the second step is under way
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	hist, err := os.ReadFile(filepath.Join(out1, "history.jsonl"))
	if err != nil || !bytes.HasSuffix(hist, []byte("\n")) || !bytes.Contains(hist, []byte("status.txt")) {
		t.Fatalf("history after SIGKILL (%v):\n%s", err, hist)
	}

	srv2 := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "status.txt says fixed."}.Reply(),
	)
	out2 := filepath.Join(repo, ".runner", "runs", "second")
	// A killed run has no final record, so no history digest to check
	// its history against: refused unless --force.
	res := runRunner(t, repo, env, "exec", spec, "--out", filepath.Join(repo, ".runner", "runs", "refused"), "--base-url", srv2.URL(),
		"--continue", out1, "--prompt", "Finish the job.", "--quiet")
	if res.code != 2 || !strings.Contains(res.stderr, "killed before it ended") || !strings.Contains(res.stderr, "give --force") || len(srv2.Requests()) != 0 {
		t.Fatalf("continue of a killed run without --force: exit %d, %d model calls\n%s", res.code, len(srv2.Requests()), res.stderr)
	}
	res = runRunner(t, repo, env, "exec", spec, "--out", out2, "--base-url", srv2.URL(),
		"--continue", out1, "--prompt", "Finish the job.", "--force", "--quiet")
	if res.code != 0 {
		t.Fatalf("continue exit %d\n%s", res.code, res.stderr)
	}
	first := string(srv2.Requests()[0].Raw)
	if !strings.Contains(first, `half`) || !strings.Contains(first, "Finish the job.") {
		t.Errorf("the continued request lacks the killed run's step or the new prompt:\n%s", first)
	}
	recs := readEvents(t, filepath.Join(out2, "events.jsonl"))
	var rs event.RunStarted
	if err := recs[0].Decode(&rs); err != nil || rs.Continues == nil || rs.Continues.Dir != out1 || !rs.Continues.Forced {
		t.Errorf("run.started continues = %+v (%v)", rs.Continues, err)
	}
	patch, err := os.ReadFile(filepath.Join(out2, "changes.patch"))
	if err != nil || !strings.Contains(string(patch), "+fixed") || strings.Contains(string(patch), ".runner") {
		t.Errorf("changes.patch (%v):\n%s", err, patch)
	}
	// The whole change applies to the first run's base: the committed repo.
	clean := t.TempDir()
	gittest.Run(t, clean, "clone", "-q", repo, ".")
	gittest.Run(t, clean, "apply", filepath.Join(out2, "changes.patch"))
	if got, _ := os.ReadFile(filepath.Join(clean, "status.txt")); string(got) != "fixed\n" {
		t.Errorf("status.txt after git apply = %q", got)
	}
}

// TestReportShowsTheChain: `runner report` on the last run of a chain shows
// every run of the conversation, earliest first, with the totals.
func TestReportShowsTheChain(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	var outs []string
	for i, text := range []string{"half", "fixed"} {
		srv := newModel(t,
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"`+text+`\n"}`)}}.Reply(),
			llmtest.Turn{Text: "status.txt says " + text + "."}.Reply(),
			llmtest.Turn{Text: "I leave it at " + text + "."}.Reply(), // after the failed check
		)
		out := filepath.Join(".runner", "runs", text)
		args := []string{"exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet"}
		if i > 0 {
			args = append(args, "--continue", outs[i-1], "--prompt", "Now make it say fixed.")
		}
		res := runRunner(t, repo, env, args...)
		if i == 0 && res.code != 1 || i == 1 && res.code != 0 { // the check fails on "half"
			t.Fatalf("run %d exit %d\n%s", i+1, res.code, res.stderr)
		}
		outs = append(outs, out)
	}
	res := runRunner(t, repo, env, "report", filepath.Join(outs[1], "events.jsonl"))
	if res.code != 0 {
		t.Fatalf("report exit %d\n%s", res.code, res.stderr)
	}
	md := res.stdout
	i, j := strings.Index(md, "I leave it at half."), strings.Index(md, "status.txt says fixed.")
	if !strings.Contains(md, "Conversation of 2 runs") || i < 0 || j < 0 || i > j || !strings.Contains(md, "**total**") {
		t.Errorf("report does not show the chain in order:\n%s", md)
	}
	alone := runRunner(t, repo, env, "report", "--no-chain", filepath.Join(outs[1], "events.jsonl"))
	if strings.Contains(alone.stdout, "I leave it at half.") || !strings.Contains(alone.stdout, "status.txt says fixed.") {
		t.Errorf("--no-chain still shows the earlier run:\n%s", alone.stdout)
	}
}
