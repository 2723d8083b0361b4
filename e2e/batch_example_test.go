package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// batchExampleFiles are the shipped files of examples/batch the offline
// run needs.
var batchExampleFiles = []string{"batch.yaml", "task.yaml", "repos.txt", "make-demo-repos.sh"} //nolint:gochecknoglobals // constant list

// batchExampleIDs are the repository ids of the example's manifest.
var batchExampleIDs = []string{"demo-svc-a", "demo-svc-b", "demo-svc-c-main"} //nolint:gochecknoglobals // constant list

// editorconfig is what the scripted model writes in every demo repository
// (their Go files are indented with tabs).
const editorconfig = "root = true\n\n[*]\nend_of_line = lf\ninsert_final_newline = true\n\n[*.go]\nindent_style = tab\n"

// batchModel answers the example's task the same way in each repository,
// whatever order the repositories run in: by the number of tool results
// in the request, read main.go, then write .editorconfig, then answer.
// Its replies name model.
func batchModel(req llmtest.RecordedRequest, model string) llmtest.Reply {
	results := 0
	for _, m := range req.Messages() {
		if m["role"] == "tool" {
			results++
		}
	}
	switch results {
	case 0:
		return llmtest.Turn{Model: model, Text: "Let me see how the code is indented.",
			ToolCalls: []llmtest.ToolCall{{ID: "call_read", Name: "read", Arguments: `{"path":"main.go"}`}}}.Reply()
	case 1:
		args, _ := json.Marshal(map[string]string{"path": ".editorconfig", "content": editorconfig})
		return llmtest.Turn{Model: model, Text: "main.go is indented with tabs and there is no .editorconfig.",
			ToolCalls: []llmtest.ToolCall{{ID: "call_write", Name: "write", Arguments: string(args)}}}.Reply()
	default:
		return llmtest.Turn{Model: model, Text: "Added an .editorconfig: tabs for Go files (as main.go is indented), LF line ends and a final newline."}.Reply()
	}
}

// batchExampleDir copies the example into a temp dir and creates its demo
// repositories with the shipped script.
func batchExampleDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range batchExampleFiles {
		copyFileT(t, filepath.Join(repoRoot, "examples", "batch", f), filepath.Join(dir, f))
	}
	script := exec.CommandContext(t.Context(), "sh", "make-demo-repos.sh")
	script.Dir, script.Env = dir, append(baseEnv(t), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("make-demo-repos.sh: %v\n%s", err, out)
	}
	return dir
}

// TestBatchExampleCassettes regenerates examples/batch/cassettes/ with
// -update: `batch run --record` against the scripted model, so the
// cassettes are exactly what --record writes. Without -update it checks
// that there is one per repository of the manifest, with no API key.
func TestBatchExampleCassettes(t *testing.T) {
	cassettes := filepath.Join(repoRoot, "examples", "batch", "cassettes")
	if golden.Update() {
		dir := batchExampleDir(t)
		srv := llmtest.NewServerFunc(t, func(req llmtest.RecordedRequest) llmtest.Reply { return batchModel(req, "gpt-4.1-mini") })
		_ = srv.Requests()
		if err := os.RemoveAll(cassettes); err != nil {
			t.Fatal(err)
		}
		env := append(baseEnv(t), "OPENAI_API_KEY=sk-scripted-not-a-real-key")
		res := runRunner(t, dir, env, "batch", "run", "batch.yaml", "--out", filepath.Join(t.TempDir(), "out"),
			"--record", cassettes, "--base-url", srv.URL())
		if res.code != 0 {
			t.Fatalf("record: exit %d\n%s", res.code, res.stderr)
		}
	}
	for _, id := range batchExampleIDs {
		data, err := os.ReadFile(filepath.Join(cassettes, id+".jsonl"))
		if err != nil {
			t.Fatalf("%v; run go test ./e2e -run TestBatchExampleCassettes -update", err)
		}
		if n := strings.Count(strings.TrimSpace(string(data)), "\n") + 1; n != 3 {
			t.Errorf("%s holds %d exchanges, want 3", id, n)
		}
		if strings.Contains(string(data), "sk-scripted") {
			t.Errorf("%s holds the API key", id)
		}
	}
}

// TestBatchExampleOffline runs the batch example's README command as
// written (`batch run batch.yaml --out out --replay cassettes`) through
// the built binary with no API key and no network: exit 0, every
// repository of the manifest a success with its .editorconfig in the
// patch, and a summary. It keeps the shipped cassettes from rotting.
func TestBatchExampleOffline(t *testing.T) {
	t.Parallel()
	dir := batchExampleDir(t)
	copyDirT(t, filepath.Join(repoRoot, "examples", "batch", "cassettes"), filepath.Join(dir, "cassettes"))
	res := runRunner(t, dir, baseEnv(t), "batch", "run", "batch.yaml", "--out", "out", "--replay", "cassettes")
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}
	got := map[string]string{}
	f, err := os.Open(filepath.Join(dir, "out", "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			ID, Status   string
			FilesChanged int    `json:"files_changed"`
			PatchPath    string `json:"patch_path"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("results.jsonl: %v: %s", err, sc.Bytes())
		}
		got[line.ID] = line.Status
		if line.Status != "success" || line.FilesChanged != 1 {
			t.Errorf("%s: %s with %d files, want success with 1", line.ID, line.Status, line.FilesChanged)
			continue
		}
		patch, err := os.ReadFile(filepath.Join(dir, "out", filepath.FromSlash(line.PatchPath)))
		if err != nil || !strings.Contains(string(patch), "+++ b/.editorconfig") || !strings.Contains(string(patch), "+indent_style = tab") {
			t.Errorf("%s: patch %q (%v) does not add the .editorconfig", line.ID, patch, err)
		}
	}
	if len(got) != len(batchExampleIDs) {
		t.Errorf("results for %v, want %v", got, batchExampleIDs)
	}
	for _, id := range batchExampleIDs {
		if _, ok := got[id]; !ok {
			t.Errorf("no result for %s", id)
		}
	}
	requireFiles(t, filepath.Join(dir, "out"), "manifest.json", "summary.md")
}
