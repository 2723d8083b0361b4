package pipeline

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestExecReplay records a session, then replays it: run.started names the
// cassette as its base_url. A spec with another prompt is refused before
// anything is written (exit 2, naming both prompts): the cassette belongs
// to another task.
func TestExecReplay(t *testing.T) {
	spec, repo := execFixture(t)
	srv := newModel(t, llmtest.Turn{Text: "Nothing to write."}.Reply())
	cassette := filepath.Join(t.TempDir(), "session.jsonl")
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Record: cassette}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stderr bytes.Buffer
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, Replay: cassette, Stderr: &stderr}); err != nil {
		t.Fatalf("Exec: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var started event.RunStarted
	if err := validLog(t, data)[0].Decode(&started); err != nil || started.BaseURL != "replay:"+cassette {
		t.Errorf("run.started base_url %q (%v), want replay:%s", started.BaseURL, err, cassette)
	}

	other := filepath.Join(t.TempDir(), "other.yaml")
	mustWrite(t, other, strings.Replace(runSpec, "prompt: Write hello.txt.", "prompt: Write bye.txt.", 1))
	out = filepath.Join(t.TempDir(), "out")
	_, err = Exec(t.Context(), ExecOptions{Task: other, Repo: repo, Out: out, Replay: cassette, Quiet: true, Stderr: io.Discard})
	if code := ExitCode(err); code != ExitUsage || err == nil ||
		!strings.Contains(err.Error(), "recorded for another task") || !strings.Contains(err.Error(), `"Write hello.txt."`) ||
		!strings.Contains(err.Error(), `"Write bye.txt."`) {
		t.Errorf("foreign cassette: exit %d, %v; want 2 naming both prompts", code, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused replay wrote its out dir: %v", err)
	}
}

// TestReplayMisfitExitsUsage: a cassette that stops fitting mid-run (a
// call it does not hold, or a different model) is an input problem: the
// run ends error, class usage, exit 2, not a provider failure (3).
func TestReplayMisfitExitsUsage(t *testing.T) {
	spec, repo := execFixture(t)
	srv := newModel(t, writeTurn(), llmtest.Turn{Text: "Done."}.Reply())
	full := filepath.Join(t.TempDir(), "session.jsonl")
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Record: full, Isolate: true}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "short.jsonl")
	mustWrite(t, short, strings.SplitAfter(string(data), "\n")[0]) // the first call only
	tests := []struct {
		name, cassette, model, want string
	}{
		{"exhausted", short, "", "cassette exhausted"},
		{"other model", full, "gpt-4.1", "cassette mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, Replay: tt.cassette, Model: tt.model,
				Quiet: true, Stderr: io.Discard, Isolate: true})
			if code := ExitCode(err); code != ExitUsage {
				t.Errorf("exit %d (%v), want 2", code, err)
			}
			if res.Error == nil || res.Error.Class != event.ClassUsage || !strings.Contains(res.Error.Message, tt.want) {
				t.Errorf("run error %+v, want class usage with %q", res.Error, tt.want)
			}
		})
	}
}

func TestRecordedPrompt(t *testing.T) {
	ex := func(body string) *llm.Cassette {
		return &llm.Cassette{Exchanges: []llm.Exchange{{Request: llm.RecordedRequest{Body: json.RawMessage(body)}}}}
	}
	tests := []struct {
		c    *llm.Cassette
		want string
	}{
		{nil, ""},
		{&llm.Cassette{}, ""},
		{ex(`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"do it"}]}`), "do it"},
		{ex(`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]}]}`), "ab"},
		{ex(`{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"x"}]}`), "first"},
		{ex(`"not json"`), ""},
		{ex(`{"instructions":"s","input":[{"role":"user","content":"responses prompt"},{"type":"function_call","call_id":"c"}]}`), "responses prompt"},
		{ex(`{"input":[{"role":"user","content":[{"type":"input_text","text":"parts"}]}]}`), "parts"},
	}
	for _, tt := range tests {
		if got := recordedPrompt(tt.c); got != tt.want {
			t.Errorf("recordedPrompt = %q, want %q", got, tt.want)
		}
	}
}
