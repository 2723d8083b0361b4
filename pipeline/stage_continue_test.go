package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

const testKey = "sk-unit-0123456789abcdef"

// continueRun runs one exec in repo with out dir out, continuing from
// (when not ""), and returns the result and error.
func continueRun(t *testing.T, spec, repo, out, from, prompt string, force bool, srv *llmtest.Server) (Result, error) {
	t.Helper()
	r := testRun{specFile: spec, repo: repo, out: out, srv: srv, noLog: true, opts: func(o *ExecOptions) {
		o.Continue, o.Prompt, o.Force, o.Stdout = from, prompt, force, &bytes.Buffer{}
	}}.exec(t)
	if r.err != nil {
		t.Logf("exec %s: %v\n%s", out, r.err, r.stderr)
	}
	return r.res, r.err
}

func writeFileTurn(path, content string) llmtest.Reply {
	args, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", string(args))}}.Reply()
}

// rawMessages are a recorded request's messages as JSON, one per element.
func rawMessages(t *testing.T, r llmtest.RecordedRequest) []string {
	t.Helper()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(body.Messages))
	for i, m := range body.Messages {
		out[i] = string(m)
	}
	return append(out, "tools:"+string(body.Tools))
}

// TestContinueChainOfThree: three runs, each continuing the last: every
// continued run's first request starts with the previous run's last
// request byte for byte; run.started names the run continued; the last
// changes.patch applies to the original tree and gives the final one;
// run.patch holds only the last run's change.
func TestContinueChainOfThree(t *testing.T) {
	spec, repo := execFixture(t)
	orig := t.TempDir()
	copyDir(t, repo, orig)
	outs := []string{filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r2"), filepath.Join(t.TempDir(), "r3")}
	servers := []*llmtest.Server{
		newModel(t, writeFileTurn("hello.txt", "hello\n"), llmtest.Turn{Text: "Wrote hello.txt."}.Reply()),
		newModel(t, writeFileTurn("bye.txt", "bye\n"), llmtest.Turn{Text: "Wrote bye.txt."}.Reply()),
		newModel(t, writeFileTurn("hello.txt", "hello, world\n"), llmtest.Turn{Text: "Changed hello.txt."}.Reply()),
	}
	prompts := []string{"", "Also write bye.txt.", "Now greet the world."}
	for i := range outs {
		from := ""
		if i > 0 {
			from = outs[i-1]
		}
		res, err := continueRun(t, spec, repo, outs[i], from, prompts[i], false, servers[i])
		if err != nil || res.Status != event.StatusSuccess {
			t.Fatalf("run %d: %v %+v", i+1, err, res)
		}
	}
	for i := 1; i < len(outs); i++ {
		prev := servers[i-1].Requests()
		last := rawMessages(t, prev[len(prev)-1])
		first := rawMessages(t, servers[i].Requests()[0])
		if len(first) != len(last)+2 {
			t.Fatalf("run %d's first request has %d messages, the last of run %d %d", i+1, len(first)-1, i, len(last)-1)
		}
		for j := range len(last) - 1 {
			if first[j] != last[j] {
				t.Fatalf("run %d message %d differs from run %d's last request:\n%s\n%s", i+1, j, i, first[j], last[j])
			}
		}
		if first[len(first)-1] != last[len(last)-1] {
			t.Errorf("run %d offers other tools than run %d", i+1, i)
		}
		if !strings.Contains(first[len(first)-2], prompts[i]) {
			t.Errorf("run %d's new message is %s", i+1, first[len(first)-2])
		}
		started := firstRecord(t, outs[i], "run.started")
		var rs event.RunStarted
		if err := started.Decode(&rs); err != nil || rs.Continues == nil || rs.Continues.Dir != outs[i-1] || rs.Continues.Forced {
			t.Errorf("run %d run.started continues = %+v (%v)", i+1, rs.Continues, err)
		}
	}
	// The whole change applies to the original tree.
	patch := filepath.Join(outs[2], "changes.patch")
	gittest.Run(t, orig, "apply", "--whitespace=nowarn", patch)
	for name, want := range map[string]string{"hello.txt": "hello, world\n", "bye.txt": "bye\n", "README": "unit\n"} {
		if got, err := os.ReadFile(filepath.Join(orig, name)); err != nil || string(got) != want {
			t.Errorf("%s after git apply = %q, %v; want %q", name, got, err, want)
		}
	}
	runPatch, err := os.ReadFile(filepath.Join(outs[2], "run.patch"))
	if err != nil || !strings.Contains(string(runPatch), "+hello, world") || strings.Contains(string(runPatch), "bye.txt") {
		t.Errorf("run.patch should hold only run 3's change:\n%s (%v)", runPatch, err)
	}
}

// TestContinueAfterFailure: a run that hit its step limit can be
// continued; the history holds its last complete step.
func TestContinueAfterFailure(t *testing.T) {
	spec, repo := execFixture(t)
	out1, out2 := filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r2")
	srv1 := newModel(t, writeFileTurn("a.txt", "a\n"), writeFileTurn("b.txt", "b\n"), writeFileTurn("c.txt", "c\n"))
	res, _ := continueRun(t, spec, repo, out1, "", "", false, srv1)
	if res.Status == event.StatusSuccess {
		t.Fatalf("run 1 should fail on max_steps: %+v", res)
	}
	srv2 := newModel(t, llmtest.Turn{Text: "Finished."}.Reply())
	res, err := continueRun(t, spec, repo, out2, out1, "Finish up.", false, srv2)
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("continue after failure: %v %+v", err, res)
	}
	first := rawMessages(t, srv2.Requests()[0])
	if !strings.Contains(strings.Join(first, "\n"), "b.txt") {
		t.Errorf("the continued conversation lost the earlier steps:\n%s", strings.Join(first, "\n"))
	}
}

// TestContinueAfterCancel: a cancelled run leaves a history that can be
// continued.
func TestContinueAfterCancel(t *testing.T) {
	spec, repo := execFixture(t)
	out1, out2 := filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r2")
	stall := llmtest.Turn{Text: "thinking…"}.Reply()
	stall.Stall, stall.StallAfter = true, 10
	srv1 := newModel(t, writeFileTurn("a.txt", "a\n"), stall)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for len(srv1.Requests()) < 2 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Millisecond): // a poll, not a spin: on two cores a spinning goroutine takes one from the run
			}
		}
		cancel()
	}()
	var buf bytes.Buffer
	res, _ := Exec(ctx, ExecOptions{Task: spec, Repo: repo, Out: out1, BaseURL: srv1.URL(), APIKey: testKey,
		Quiet: true, Stdout: &buf, Stderr: &buf})
	if res.Status != event.StatusCancelled {
		t.Fatalf("run 1 = %+v", res)
	}
	srv2 := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
	res, err := continueRun(t, spec, repo, out2, out1, "Go on.", false, srv2)
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("continue after cancel: %v %+v", err, res)
	}
	if !strings.Contains(strings.Join(rawMessages(t, srv2.Requests()[0]), "\n"), "a.txt") {
		t.Error("the continued conversation lost the step before the cancel")
	}
}

// TestContinueRefusals: a missing or corrupt history, another spec and a
// work tree that moved on are refused with exit 2 (--force overrides the
// last two), never a silent fresh start.
func TestContinueRefusals(t *testing.T) {
	spec, repo := execFixture(t)
	out1 := filepath.Join(t.TempDir(), "r1")
	srv := newModel(t, writeFileTurn("hello.txt", "hello\n"), llmtest.Turn{Text: "Done."}.Reply())
	if res, err := continueRun(t, spec, repo, out1, "", "", false, srv); err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("run 1: %v", err)
	}
	unused := newModel(t)

	// A directory without a history.
	_, err := continueRun(t, spec, repo, filepath.Join(t.TempDir(), "x"), t.TempDir(), "more", false, unused)
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "history.jsonl does not exist") {
		t.Errorf("missing history: exit %d, %v", ExitCode(err), err)
	}

	// A corrupt history (a complete line that is not JSON).
	bad := t.TempDir()
	copyDir(t, out1, bad)
	f, _ := os.OpenFile(filepath.Join(bad, "history.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("{not json\n")
	_ = f.Close()
	_, err = continueRun(t, spec, repo, filepath.Join(t.TempDir(), "x"), bad, "more", false, unused)
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "corrupt history line") {
		t.Errorf("corrupt history: exit %d, %v", ExitCode(err), err)
	}

	// Another spec.
	other := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, other, strings.Replace(runSpec, "Write hello.txt.", "Write hello.txt twice.", 1))
	_, err = continueRun(t, other, repo, filepath.Join(t.TempDir(), "x"), out1, "more", false, unused)
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "different task spec") {
		t.Errorf("other spec: exit %d, %v", ExitCode(err), err)
	}
	if len(unused.Requests()) != 0 {
		t.Fatalf("a refused continue called the model")
	}

	// A work tree that changed since: refused, with the refusal recorded.
	mustWrite(t, filepath.Join(repo, "README"), "edited by hand\n")
	out2 := filepath.Join(t.TempDir(), "r2")
	res, err := continueRun(t, spec, repo, out2, out1, "more", false, unused)
	if ExitCode(err) != ExitUsage || res.Status != event.StatusError || res.Error == nil || res.Error.Class != event.ClassUsage ||
		!strings.Contains(res.Error.Message, "work tree changed") {
		t.Errorf("diverged: exit %d, %+v, %v", ExitCode(err), res, err)
	}
	// The refused run's log (and so its console) starts with run.started,
	// before the patch event of its final stages.
	if types := recordTypes(t, filepath.Join(out2, "events.jsonl")); len(types) < 2 || types[0] != "run.started" || types[len(types)-1] != "run.finished" {
		t.Errorf("refused run's events %v: want run.started first, run.finished last", types)
	}
	if len(unused.Requests()) != 0 {
		t.Fatalf("a refused continue called the model")
	}
	// --force goes on, and says so in run.started.
	srv3 := newModel(t, llmtest.Turn{Text: "Done again."}.Reply())
	out3 := filepath.Join(t.TempDir(), "r3")
	res, err = continueRun(t, other, repo, out3, out1, "more", true, srv3)
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("--force: %v %+v", err, res)
	}
	var rs event.RunStarted
	if err := firstRecord(t, out3, "run.started").Decode(&rs); err != nil || rs.Continues == nil || !rs.Continues.Forced {
		t.Errorf("forced run.started continues = %+v", rs.Continues)
	}
}

// TestHistoryHasNoSecrets: a secret the agent reads into its context is
// redacted in the stored history, like in the event log.
func TestHistoryHasNoSecrets(t *testing.T) {
	spec, repo := execFixture(t)
	secret := "ghp_" + strings.Repeat("Z9", 18)
	mustWrite(t, filepath.Join(repo, "notes.txt"), "token "+secret+"\n")
	out := filepath.Join(t.TempDir(), "r1")
	read := llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"notes.txt"}`)}}.Reply()
	srv := newModel(t, read, llmtest.Turn{Text: "The token is " + secret}.Reply())
	var buf bytes.Buffer
	res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), APIKey: testKey,
		Environ: []string{"GITHUB_TOKEN=" + secret}, Quiet: true, Stdout: &buf, Stderr: &buf})
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("%v %+v", err, res)
	}
	data, err := os.ReadFile(filepath.Join(out, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte(testKey)) {
		t.Errorf("history.jsonl holds a secret:\n%s", data)
	}
	if !bytes.Contains(data, []byte("notes.txt")) {
		t.Errorf("history.jsonl lacks the conversation:\n%s", data)
	}
}

// firstRecord is the first record of type typ in dir's events.jsonl.
func firstRecord(t *testing.T, dir, typ string) event.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := event.ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == typ {
			return r
		}
	}
	t.Fatalf("no %s in %s", typ, dir)
	return event.Record{}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.CommandContext(t.Context(), "cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
}

// TestContinueAfterIsolate: an --isolate run's tree is gone; continuing it
// in the untouched work tree is refused with the way out (apply its patch),
// and after `git apply` of that patch the conversation goes on, with no
// --force: the run kept its base tree in the work tree's store.
func TestContinueAfterIsolate(t *testing.T) {
	spec, repo := execFixture(t)
	out1, out2 := filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r2")
	srv := newModel(t, writeFileTurn("hello.txt", "hello\n"), llmtest.Turn{Text: "Done."}.Reply())
	var buf bytes.Buffer
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out1, BaseURL: srv.URL(), APIKey: testKey,
		Isolate: true, Quiet: true, Stdout: &buf, Stderr: &buf}); err != nil {
		t.Fatal(err)
	}
	unused := newModel(t)
	_, err := continueRun(t, spec, repo, out2, out1, "more", false, unused)
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--isolate") || !strings.Contains(err.Error(), "git -C "+repo+" apply ") {
		t.Fatalf("continue after --isolate: exit %d, %v", ExitCode(err), err)
	}
	gittest.Run(t, repo, "apply", "--whitespace=nowarn", filepath.Join(out1, "changes.patch"))
	srv2 := newModel(t, llmtest.Turn{Text: "Went on."}.Reply())
	if res, err := continueRun(t, spec, repo, filepath.Join(t.TempDir(), "r3"), out1, "more", false, srv2); err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("continue after applying the patch: %v %+v", err, res)
	}
}

// TestContinueCheckedBeforeTheProvider: a --continue of a directory with
// no history is the error a user sees, not the missing API key that comes
// after it in the set-up.
func TestContinueCheckedBeforeTheProvider(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	spec, repo := execFixture(t)
	var stdout, stderr bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "x"),
		Continue: filepath.Join(t.TempDir(), "nonexistent"), Prompt: "more", Quiet: true, Stdout: &stdout, Stderr: &stderr})
	if ExitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), "history.jsonl does not exist") {
		t.Errorf("exit %d, %v: want the missing history named first", ExitCode(err), err)
	}
}

// recordTypes is the type of every record of an events.jsonl, in order.
func recordTypes(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		types = append(types, rec.Type)
	}
	return types
}
