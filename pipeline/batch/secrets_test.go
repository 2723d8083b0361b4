package batch

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// leakTask lets the agent write anything.
const leakTask = `version: 1
name: leak
model: gpt-4.1-mini
prompt: Write the notes for {{ .Inputs.name }}.
inputs:
  name: {default: nobody}
permissions:
  read: allow
  edit: allow
`

// leakTurns have the agent write an environment secret and a token shape
// into a text file and into a binary file (a NUL byte first: the patch
// carries it as a GIT binary patch, where no secret is visible as text),
// then finish.
func leakTurns(envSecret, token string) []llmtest.Reply {
	return []llmtest.Reply{
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{
			llmtest.Call("write", `{"path":"notes.txt","content":"service `+envSecret+` forge `+token+`\n"}`),
			llmtest.Call("write", `{"path":"blob.bin","content":"\u0000\u0001 `+envSecret+` `+token+`\n"}`),
			llmtest.Call("write", `{"path":"fine.txt","content":"nothing to hide\n"}`),
		}}.Reply(),
		llmtest.Turn{Text: "Wrote the notes."}.Reply(),
	}
}

// TestBatchSecretsEveryPath is the batch's TestSecretsEveryPath (e2e):
// the agent writes an environment secret and a token shape into a text
// and a binary file of each repository's work tree, with --record. Each
// repository fails the secret gate (status violation, the binary file
// named too), and neither value is in any file the batch leaves: the out
// dir (logs, patches, the saved trees publishing pushes, results.jsonl,
// summaries), the recorded cassettes or the cache (clones, work trees).
// The file without a secret is still saved.
func TestBatchSecretsEveryPath(t *testing.T) {
	t.Parallel()
	const envSecret = "planted-Env-secret-5c1e77aa"
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	dir := t.TempDir()
	spec := makeBatch(t, dir, 2, "")
	write(t, filepath.Join(dir, "task.yaml"), leakTask)
	srv := llmtest.NewServer(t, append(leakTurns(envSecret, token), leakTurns(envSecret, token)...)...)
	out, cache, record := filepath.Join(dir, "out"), filepath.Join(dir, "cache"), filepath.Join(dir, "recorded")
	sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: cache, RetryBackoff: time.Millisecond, Concurrency: 1,
		Executor: &PipelineExecutor{BaseURL: srv.URL(), Record: record, APIKey: "sk-test-0123456789abcdef",
			Environ: []string{"PATH=" + os.Getenv("PATH"), "SERVICE_TOKEN=" + envSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Results {
		if r.Status != StatusTaskFailed {
			t.Errorf("%s: status %s (%s), want %s (the secret gate: violation)", r.ID, r.Status, r.Error, StatusTaskFailed)
		}
	}
	files := 0
	for _, root := range []string{out, cache, record} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) == "objects" {
				return nil //nolint:nilerr // nothing to read
			}
			data, rerr := os.ReadFile(p)
			if rerr != nil {
				return nil //nolint:nilerr // a socket, a vanished file
			}
			files++
			for _, s := range []string{envSecret, token} {
				if bytes.Contains(data, []byte(s)) {
					t.Errorf("%s holds the secret %q", p, s)
				}
			}
			return nil
		})
	}
	for _, id := range []string{"repos-r00", "repos-r01"} {
		tree := filepath.Join(out, id, TreeDir)
		if _, err := os.Stat(filepath.Join(tree, "fine.txt")); err != nil {
			t.Errorf("%s: the file without a secret is not saved: %v", id, err)
		}
		if patch, _ := os.ReadFile(filepath.Join(out, id, "changes.patch")); !bytes.Contains(patch, []byte("# runner: blob.bin is left out: it holds a secret")) ||
			bytes.Contains(patch, []byte("b/blob.bin")) {
			t.Errorf("%s: the patch still carries blob.bin's section (its secret deflated and base85):\n%s", id, patch)
		}
		if g := secretGateOf(t, filepath.Join(out, id, "events.jsonl")); !slices.Equal(g.Paths, []string{"blob.bin", "notes.txt"}) {
			t.Errorf("%s: secret gate %+v, want it to name blob.bin (binary: not visible in the patch's text) and notes.txt", id, g)
		}
	}
	if files < 10 {
		t.Errorf("only %d files read: did the batch leave its outputs?", files)
	}
}

// secretGateOf returns the secret gate.failed event of the log at path.
func secretGateOf(t *testing.T, path string) event.GateFailed {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := event.ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if p, err := r.Payload(); err == nil {
			if g, ok := p.(event.GateFailed); ok && g.Gate == event.GateSecret {
				return g
			}
		}
	}
	return event.GateFailed{}
}
