package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestSpecGate: the task spec the run runs under lies in the work tree
// and the rules let the agent edit it (it added
// "webfetch: allow" to its own permissions and the run was a success).
// Whether the edit tool or a real bash command (sandbox on) changes it,
// with and without --isolate, the run is a violation with gate
// task_spec, and the spec in the work tree is byte for byte what it was.
// The control: the same edit of a file of the same name when the spec is
// outside the tree is a success.
func TestSpecGate(t *testing.T) {
	const specText = gateSpec + "sandbox: {mode: auto}\n"
	edit := llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("edit",
		`{"path":"task.yaml","old_string":"read: allow","new_string":"read: allow\n  webfetch: allow"}`)}}.Reply()
	for _, tc := range []struct {
		name         string
		inTree       bool
		isolate      bool
		reply        llmtest.Reply
		wantViolated bool
	}{
		{"edit-tool", true, false, edit, true},
		{"edit-tool-isolate", true, true, edit, true},
		{"bash", true, false, makeTurn(), true},
		{"outside-control", false, false, edit, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := gittest.Repo(t, map[string]string{"task.yaml": specText, "Makefile": "all:\n\tprintf '  webfetch: allow\\n' >> task.yaml\n"})
			spec := filepath.Join(repo, "task.yaml")
			if !tc.inTree {
				spec = filepath.Join(t.TempDir(), "task.yaml")
				mustWrite(t, spec, specText)
			}
			srv := newModel(t, tc.reply, llmtest.Turn{Text: "Done."}.Reply())
			out := t.TempDir()
			var stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, Isolate: tc.isolate, Quiet: true,
				BaseURL: srv.URL(), APIKey: "sk-unit-0123456789abcdef", Stdout: &bytes.Buffer{}, Stderr: &stderr})
			data, rerr := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			gates, fin := gatesOf(t, validLog(t, data))
			patch, _ := os.ReadFile(filepath.Join(out, "changes.patch"))
			if !bytes.Contains(patch, []byte("+  webfetch: allow")) {
				t.Fatalf("the agent's change did not happen (patch %q, err %v):\n%s", patch, err, stderr.String())
			}
			if !tc.wantViolated {
				if err != nil || fin.Status != event.StatusSuccess || len(gates) != 0 {
					t.Errorf("spec outside the tree: err %v, status %s, gates %+v; want success", err, fin.Status, gates)
				}
				return
			}
			if fin.Status != event.StatusViolation || len(gates) != 1 || gates[0].Gate != event.GateTaskSpec ||
				len(gates[0].Paths) != 1 || gates[0].Paths[0] != "task.yaml" {
				t.Errorf("status %s, gates %+v; want violation with gate task_spec naming task.yaml", fin.Status, gates)
			}
			// in place: put back; with --isolate: the user's copy never changed
			if got, _ := os.ReadFile(filepath.Join(repo, "task.yaml")); string(got) != specText {
				t.Errorf("task.yaml after the run = %q, want it as it was", got)
			}
		})
	}
}
