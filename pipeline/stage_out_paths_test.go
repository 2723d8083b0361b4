package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestUnwritableOutputPathsStopUpFront: a --patch, --events or --out that
// cannot be made (its directory is a regular file) is a usage error
// (exit 2) before the model is asked anything and before any out dir is
// made (a bad --patch was found after the whole run, exit
// 3, and with --isolate the work was lost).
func TestUnwritableOutputPathsStopUpFront(t *testing.T) {
	dir := t.TempDir()
	afile := filepath.Join(dir, "afile")
	mustWrite(t, afile, "x")
	bad := filepath.Join(afile, "sub", "f")
	for _, tc := range []struct {
		flag string
		opts func(*ExecOptions, string)
	}{
		{"--patch", func(o *ExecOptions, out string) { o.Patch, o.Out = bad, out }},
		{"--events", func(o *ExecOptions, out string) { o.Events, o.Out = bad, out }},
		{"--out", func(o *ExecOptions, _ string) { o.Out = bad }},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
			spec := filepath.Join(t.TempDir(), "task.yaml")
			mustWrite(t, spec, gateSpec)
			srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
			out := filepath.Join(t.TempDir(), "out")
			o := ExecOptions{Task: spec, Repo: repo, Isolate: true, Quiet: true, BaseURL: srv.URL(),
				APIKey: "sk-unit-0123456789abcdef", Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
			tc.opts(&o, out)
			_, err := Exec(t.Context(), o)
			if code := ExitCode(err); code != ExitUsage || err == nil || !strings.Contains(err.Error(), tc.flag+" "+bad) ||
				!strings.Contains(err.Error(), "not a directory") {
				t.Errorf("exit %d, err %v; want a usage error naming %s %s and the cause", code, err, tc.flag, bad)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("the model got %d requests before the usage error", n)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the out dir %s was made (%v)", out, err)
			}
		})
	}
	// A --patch that can be made is not left behind by the check.
	good := filepath.Join(dir, "new", "p.patch")
	if err := tryCreate(good); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(good); !os.IsNotExist(err) {
		t.Errorf("tryCreate left %s (%v)", good, err)
	}
}
