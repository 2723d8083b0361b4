package mcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
)

// TestStderrFileIsBounded: a stdio server that floods its
// stderr (20 MiB here; a hostile server writes for as long as the run
// lasts) makes the runner write its stderr file, outside the sandbox, only
// up to maxStderrFile, then one line that says how much was left out; the
// server still works.
func TestStderrFileIsBounded(t *testing.T) {
	t.Parallel()
	srv, _ := stdioServer(t, "noisy", mcptest.ModeServe)
	const flood = 20 << 20
	srv.Command = []string{"bash", "-c", `yes EEEEEEEEEEEEEEE | head -c 20971520 >&2; exec "$0"`, srv.Command[0]}
	dir := t.TempDir()
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut(), StderrDir: dir})
	if res := call(t, toolByName(t, set, ToolName("noisy", "echo")), `{"text":"still here"}`); res.IsError || !strings.Contains(res.Output, "still here") {
		t.Errorf("echo after the flood: %+v", res)
	}
	set.Close()
	path := filepath.Join(dir, "noisy.stderr")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > maxStderrFile+200 || st.Size() < maxStderrFile-100 {
		t.Errorf("stderr file is %d bytes, want about the bound %d (the server wrote %d)", st.Size(), maxStderrFile, flood)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(lastN(string(data), 300), "more bytes of this server's stderr were not kept") {
		t.Errorf("stderr file's end: %q, %v", lastN(string(data), 300), err)
	}
}

func lastN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestEndlessToolListIsRefused: a server whose tools/list
// pages never end is refused at MaxListedTools, naming the server and
// why, instead of the runner holding every page until the start-up
// timeout (a minute here).
func TestEndlessToolListIsRefused(t *testing.T) {
	t.Parallel()
	srv, _ := stdioServer(t, "endless", mcptest.ModeEndless)
	_, err := Start(t.Context(), Options{Servers: []Server{srv}, Offer: offerAllBut()}, "test")
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), `"endless"`) ||
		!strings.Contains(err.Error(), fmt.Sprintf("it lists more than %d tools", MaxListedTools)) {
		t.Fatalf("err = %v", err)
	}
}
