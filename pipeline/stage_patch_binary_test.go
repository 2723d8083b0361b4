package pipeline

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// binaryLimitSpec appends to a binary file with bash (sandbox off: the
// test is about the patch, not the sandbox); LIMIT is replaced with the
// limits line under test.
const binaryLimitSpec = `version: 1
name: binlimit
model: gpt-4.1-mini
prompt: Append "tail" to big.bin.
permissions:
  read: allow
  edit: allow
  bash:
    "printf *": allow
sandbox:
  mode: off
LIMIT`

// TestBinaryPatchLimitFromSpec: limits.binary_patch_bytes is the limit the
// patch is built with, both ways, recorded in run.started. A 17 MiB binary
// file (over the 16 MiB default) that the agent appends to is left out
// by default (failed, patch_incomplete, the message naming the limit and
// the key to raise) and carried with a 32 MiB limit (a patch real git
// applies); a 64 KiB one is carried by default and left out with a 4 KiB
// limit.
func TestBinaryPatchLimitFromSpec(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the patch is checked with git apply")
	}
	for _, tc := range []struct {
		name  string
		size  int64
		limit string // the limits section ("" for none)
		bytes int64  // run.started's binary_patch_bytes
		kept  bool
	}{
		{"17MiB-default", 17 << 20, "", 16 << 20, false},
		{"17MiB-raised", 17 << 20, "limits: {binary_patch_bytes: 33554432}\n", 32 << 20, true},
		{"64KiB-default", 64 << 10, "", 16 << 20, true},
		{"64KiB-lowered", 64 << 10, "limits: {binary_patch_bytes: 4096}\n", 4096, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kept && tc.size > 16<<20 && raceEnabled {
				// About 60 s under the race detector (a 17 MiB delta and
				// its reverse); `go test ./pipeline` without -race runs it.
				t.Skip("a 17 MiB binary patch is too slow under -race; run without -race")
			}
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := filepath.Join(t.TempDir(), "repo")
			mustWrite(t, filepath.Join(repo, "big.bin"), "\x00bin")
			if err := os.Truncate(filepath.Join(repo, "big.bin"), tc.size); err != nil {
				t.Fatal(err)
			}
			orig := gitRepoCopy(t, repo)
			spec := filepath.Join(t.TempDir(), "task.yaml")
			mustWrite(t, spec, strings.Replace(binaryLimitSpec, "LIMIT", tc.limit, 1))
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"printf tail >> big.bin"}`)}}.Reply(),
				llmtest.Turn{Text: "Appended."}.Reply())
			out := t.TempDir()
			var stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, Quiet: true,
				BaseURL: srv.URL(), APIKey: "sk-unit-0123456789abcdef", Stdout: &bytes.Buffer{}, Stderr: &stderr})
			data, rerr := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			recs := validLog(t, data)
			var started event.RunStarted
			var fin event.RunFinished
			if err := recs[0].Decode(&started); err != nil || started.Limits.BinaryPatchBytes != tc.bytes {
				t.Errorf("run.started limits = %+v (%v), want binary_patch_bytes %d", started.Limits, err, tc.bytes)
			}
			if err := recs[len(recs)-1].Decode(&fin); err != nil {
				t.Fatal(err)
			}
			if tc.kept {
				if err != nil || fin.Status != event.StatusSuccess {
					t.Fatalf("run: %v, run.finished %+v\n%s", err, fin, stderr.String())
				}
				gittest.Run(t, orig, "apply", "--binary", filepath.Join(out, "changes.patch"))
				got, _ := os.ReadFile(filepath.Join(orig, "big.bin"))
				if int64(len(got)) != tc.size+4 || !bytes.HasSuffix(got, []byte("tail")) {
					t.Errorf("applied big.bin: %d bytes, want %d ending in tail", len(got), tc.size+4)
				}
				return
			}
			var exit *ExitError
			if !errors.As(err, &exit) || exit.Code != ExitTaskFailed || fin.Status != event.StatusFailed ||
				fin.Error == nil || fin.Error.Class != event.ClassPatchIncomplete {
				t.Fatalf("err = %v, run.finished %+v: want failed, patch_incomplete", err, fin)
			}
			want := "larger than the binary patch limit of " + snapshot.SizeText(tc.bytes)
			if !strings.Contains(fin.Error.Message, want) || !strings.Contains(fin.Error.Message, "raise limits.binary_patch_bytes") {
				t.Errorf("message = %q, want %q and how to raise it", fin.Error.Message, want)
			}
		})
	}
}

// gitRepoCopy makes repo a git repository with one commit and returns a
// clone of it to apply patches to.
func gitRepoCopy(t *testing.T, repo string) string {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Init(t, repo, nil)
	gittest.Run(t, "", "clone", "-q", repo, clone)
	return clone
}

// TestSparseFileIsNotRead: a command that makes a 1 TiB sparse file (no
// disk used) does not keep the runner reading it for hours (
// 3 GiB took 46 s per snapshot, past limits.timeout): the step's
// snapshot, the final patch, the secret gate stat it only, and the run is
// failed, patch_incomplete, naming the file as not read.
func TestSparseFileIsNotRead(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	repo := filepath.Join(t.TempDir(), "repo")
	mustWrite(t, filepath.Join(repo, "a.txt"), "a\n")
	gitRepoCopy(t, repo)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, strings.Replace(strings.Replace(binaryLimitSpec, `"printf *": allow`, `"truncate *": allow`, 1), "LIMIT", "", 1))
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"truncate -s 1T big.bin"}`)}}.Reply(),
		llmtest.Turn{Text: "Made it."}.Reply())
	out := t.TempDir()
	var stderr bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, Quiet: true,
		BaseURL: srv.URL(), APIKey: "sk-unit-0123456789abcdef", Stdout: &bytes.Buffer{}, Stderr: &stderr})
	if fi, serr := os.Stat(filepath.Join(repo, "big.bin")); serr != nil || fi.Size() != 1<<40 {
		t.Fatalf("the command made no 1 TiB file (%v): %s", serr, stderr.String())
	}
	data, rerr := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	recs := validLog(t, data)
	var fin event.RunFinished
	if err := recs[len(recs)-1].Decode(&fin); err != nil {
		t.Fatal(err)
	}
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != ExitTaskFailed || fin.Status != event.StatusFailed ||
		fin.Error == nil || fin.Error.Class != event.ClassPatchIncomplete {
		t.Fatalf("err = %v, run.finished %+v: want failed, patch_incomplete\n%s", err, fin, stderr.String())
	}
	if !strings.Contains(fin.Error.Message, "big.bin (0 → 1099511627776 bytes, not read: larger than 256 MiB)") {
		t.Errorf("message = %q, want big.bin named as not read", fin.Error.Message)
	}
}
