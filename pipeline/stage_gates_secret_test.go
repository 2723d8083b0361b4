package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/pipeline/gate"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestGateSecretInBinaryFile: a secret written into a binary file (its
// patch section is a deflated, base85 GIT binary patch: no secret in the
// text) fails the run with the secret gate naming it, and the patch file
// leaves its section out; a text file's secret is redacted as before.
func TestGateSecretInBinaryFile(t *testing.T) {
	repo := gittest.Repo(t, map[string]string{"README": "x\n"})
	write := llmtest.Turn{ToolCalls: []llmtest.ToolCall{
		llmtest.Call("write", `{"path":"blob.bin","content":"\u0000\u0001 deploy dt-0123456789abcdefXYZ\n"}`),
		llmtest.Call("write", `{"path":"notes.txt","content":"deploy dt-0123456789abcdefXYZ\n"}`),
	}}.Reply()
	code, recs, patch := gateRun(t, repo, "", write)
	gates, fin := gatesOf(t, recs)
	if code != ExitTaskFailed || fin.Status != event.StatusViolation || len(gates) != 1 || gates[0].Gate != event.GateSecret ||
		strings.Join(gates[0].Paths, ",") != "blob.bin,notes.txt" || !strings.Contains(gates[0].Message, "blob.bin") {
		t.Fatalf("exit %d, status %s, gates %+v: want a violation, the secret gate naming blob.bin and notes.txt", code, fin.Status, gates)
	}
	if strings.Contains(patch, "b/blob.bin") || !strings.Contains(patch, "# runner: blob.bin is left out") ||
		strings.Contains(patch, "dt-0123456789abcdefXYZ") || !strings.Contains(patch, "b/notes.txt") {
		t.Errorf("patch:\n%s", patch)
	}
}

// TestGateSecretNamesFiles: the secret gate's message (stderr, summary.md,
// run.finished's error) names the files that hold the secret, the first
// gate.MaxNamedPaths of them and how many more; the event lists them all.
func TestGateSecretNamesFiles(t *testing.T) {
	for _, n := range []int{1, gate.MaxNamedPaths + 2} {
		t.Run(fmt.Sprint(n, " files"), func(t *testing.T) {
			repo := gittest.Repo(t, map[string]string{"README": "x\n"})
			var calls []llmtest.ToolCall
			var names []string
			for i := range n {
				name := fmt.Sprintf("config%d.py", i)
				names = append(names, name)
				calls = append(calls, llmtest.Call("write", `{"path":"`+name+`","content":"KEY = 'dt-0123456789abcdefXYZ'\n"}`))
			}
			code, recs, _ := gateRun(t, repo, "", llmtest.Turn{ToolCalls: calls}.Reply())
			gates, fin := gatesOf(t, recs)
			if code != ExitTaskFailed || len(gates) != 1 || gates[0].Gate != event.GateSecret || len(gates[0].Paths) != n {
				t.Fatalf("exit %d, gates %+v: want the secret gate with %d paths", code, gates, n)
			}
			want := "the patch holds a secret in " + strings.Join(names, ", ") + " ("
			if n > gate.MaxNamedPaths {
				want = "the patch holds a secret in " + strings.Join(names[:gate.MaxNamedPaths], ", ") + " and 2 more ("
			}
			if !strings.HasPrefix(gates[0].Message, want) || fin.Error == nil || !strings.Contains(fin.Error.Message, want) {
				t.Errorf("gate message %q, run error %+v: want them to begin %q", gates[0].Message, fin.Error, want)
			}
		})
	}
}
