package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// dotdotSpec allows cat and reads; %s adds more permissions.
const dotdotSpec = `version: 1
name: peek
model: gpt-4.1-mini
prompt: Read the notes.
permissions:
  read: allow
  bash: {"cat *": allow}
%s
sandbox: {mode: off}
`

// TestSymlinkDotDotThroughRunner: link-out points at a directory next to
// the repository, and the model runs `cat link-out/../outside/marker`,
// which the kernel resolves from the link's target to a file outside the
// work tree. Through the built binary the command is denied and the
// marker is nowhere in the event log; the control, with
// external_directory allowed, shows the same command does print it.
func TestSymlinkDotDotThroughRunner(t *testing.T) {
	t.Parallel()
	const marker = "outside-marker-7f3a"
	for _, tc := range []struct {
		name, extra string
		denied      bool
	}{
		{"guarded", "", true},
		{"control", `  external_directory: allow`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, repo := smallRepo(t)
			outside := filepath.Join(filepath.Dir(repo), "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "marker"), []byte(marker+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../outside", filepath.Join(repo, "link-out")); err != nil {
				t.Fatal(err)
			}
			spec := filepath.Join(t.TempDir(), "task.yaml")
			if err := os.WriteFile(spec, []byte(fmt.Sprintf(dotdotSpec, tc.extra)), 0o644); err != nil {
				t.Fatal(err)
			}
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"cat link-out/../outside/marker"}`)}}.Reply(),
				llmtest.Turn{Text: "Done."}.Reply(),
			)
			out := t.TempDir()
			env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
			res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet")
			recs := readEvents(t, filepath.Join(out, "events.jsonl"))
			denied := false
			for _, r := range recs {
				denied = denied || r.Type == "permission.denied"
			}
			log, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			printed := strings.Contains(string(log), marker)
			if denied != tc.denied || printed == tc.denied {
				t.Fatalf("denied %v, marker printed %v; want denied %v (exit %d)\n%s", denied, printed, tc.denied, res.code, res.stderr)
			}
		})
	}
}
