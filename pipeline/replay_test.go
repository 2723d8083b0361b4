package pipeline

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestExecReplay records a session, then replays it: run.started names the
// cassette as its base_url, and a spec with another prompt still replays
// but warns once on stderr.
func TestExecReplay(t *testing.T) {
	spec, repo := execFixture(t)
	srv := newModel(t, llmtest.Turn{Text: "Nothing to write."}.Reply())
	cassette := filepath.Join(t.TempDir(), "session.jsonl")
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Record: cassette}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.yaml")
	mustWrite(t, other, strings.Replace(runSpec, "prompt: Write hello.txt.", "prompt: Write bye.txt.", 1))
	tests := []struct {
		name, spec string
		warn       bool
	}{{"same prompt", spec, false}, {"other prompt", other, true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			var stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: tt.spec, Repo: repo, Out: out, Replay: cassette, Stderr: &stderr})
			if err != nil {
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
			const warning = "was recorded for a different prompt; replay continues"
			if n := strings.Count(stderr.String(), warning); n != map[bool]int{false: 0, true: 1}[tt.warn] {
				t.Errorf("%d warnings, want warn=%v:\n%s", n, tt.warn, stderr.String())
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
	}
	for _, tt := range tests {
		if got := recordedPrompt(tt.c); got != tt.want {
			t.Errorf("recordedPrompt = %q, want %q", got, tt.want)
		}
	}
}
