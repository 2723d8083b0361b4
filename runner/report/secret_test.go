package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// TestPlantedSecretNeverWritten wires the sinks as `runner exec` does (a
// redacting sink in front of the JSONL file and the console) and plants
// secrets in the environment and in a file the model reads; no output file
// and no console byte may hold them.
func TestPlantedSecretNeverWritten(t *testing.T) {
	const envSecret = "planted-env-secret-7f3a9c"
	const fileToken = "ghp_PlantedFileToken0123456789abcdefABCD"
	environ := []string{"HOME=/home/u", "OPENAI_API_KEY=" + envSecret}
	red := event.NewRedactor(environ)
	dir := t.TempDir()
	w, err := event.Create(filepath.Join(dir, outdir.EventsFile), "run-secret", event.WithRedactor(red))
	if err != nil {
		t.Fatal(err)
	}
	var console bytes.Buffer
	con := event.NewConsole(&console, event.ConsoleOptions{GitHubActions: true})
	sink := event.Redacting(event.Multi(w, con), red)
	fileContent := "config:\n  token: " + fileToken + "\n  key: \"" + envSecret + "\"\n"
	input, _ := json.Marshal(map[string]string{"command": "echo " + envSecret})
	events := []event.Payload{
		event.RunStarted{Task: "t", Model: "m", BaseURL: "https://user:" + envSecret + "@llm.example/v1"},
		event.StepStarted{Step: 1},
		event.ToolStarted{Step: 1, CallID: "c1", Tool: "read", Input: json.RawMessage(`{"path":"config.yml"}`)},
		event.ToolCompleted{Step: 1, CallID: "c1", Tool: "read", Output: fileContent},
		event.ToolStarted{Step: 1, CallID: "c2", Tool: "bash", Input: input},
		event.PermissionDenied{Step: 1, CallID: "c2", Tool: "bash", Permission: "bash", Pattern: "echo " + envSecret, Reason: "denied"},
		event.ToolFailed{Step: 1, CallID: "c2", Tool: "bash", Error: "denied: echo " + envSecret, Denied: true},
		event.Text{Step: 1, Text: "The token is " + fileToken + " and the key " + envSecret},
		event.StepFinished{Step: 1, FinishReason: "stop"},
		event.CheckFinished{Name: "c", Command: "x", Attempt: 1, ExitCode: 1, Output: fileContent},
		event.RunFinished{Status: event.StatusFailed, ExitCode: 1, Steps: 1, FinalMessage: "Found " + fileToken,
			Error: &event.RunError{Class: "checks_failed", Message: envSecret}},
	}
	for _, p := range events {
		if err := sink.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := con.Close(); err != nil {
		t.Fatal(err)
	}
	patch := "+token: " + fileToken + "\n"
	if _, err := WriteOut(t.Context(), dir, MarkdownOptions{Patch: patch, Redactor: red}); err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{"console": console.Bytes()}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		outputs[e.Name()] = data
	}
	if len(outputs) != 4 {
		t.Errorf("outputs: %d, want console, events, result, summary", len(outputs))
	}
	for name, data := range outputs {
		for _, s := range []string{envSecret, fileToken, "7f3a9c", "PlantedFileToken"} {
			if strings.Contains(string(data), s) {
				t.Errorf("%s contains %q:\n%s", name, s, data)
			}
		}
		if !strings.Contains(string(data), event.Redacted) {
			t.Errorf("%s has no redaction marker; was the secret ever there?", name)
		}
	}
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.ValidateLog(outputs[outdir.EventsFile]); err != nil {
		t.Error(err)
	}
}
