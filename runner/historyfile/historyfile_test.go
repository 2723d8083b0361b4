package historyfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/mirror"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestWriteRead: what a Writer writes, Read reads back: the header, the
// transcript, the last tree and whether the run reached its final one,
// with the digest run.finished would carry; secrets are redacted.
func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	red := event.NewRedactor([]string{"SERVICE_TOKEN=tok-0123456789abcdef"})
	w, err := Create(mirror.New(), path, Line{RunID: "r1", Task: "demo", BaseTree: "base"}, red)
	if err != nil {
		t.Fatal(err)
	}
	recs := []runner.HistoryRecord{
		{Kind: runner.HistorySystem, System: "be brief"},
		{Kind: runner.HistoryMessages, Step: 1, Messages: []llm.Message{{Role: "user", Content: "use tok-0123456789abcdef"}}},
	}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Tree("t1", false); err != nil {
		t.Fatal(err)
	}
	if err := w.Tree("t2", true); err != nil {
		t.Fatal(err)
	}
	digest := w.Digest()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "tok-0123456789abcdef") {
		t.Errorf("the secret is in the file:\n%s", data)
	}
	h, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Header.RunID != "r1" || h.Header.V != Version || h.Header.Type != TypeHeader || h.LastTree != "t2" || !h.Final ||
		h.Transcript.System != "be brief" || h.Digest != *digest {
		t.Errorf("read back %+v, digest %+v", h, *digest)
	}
}

// TestReadRefuses: a missing file, another format and a corrupt line are
// ErrHistory naming the file; a line cut by a kill is left out.
func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := `{"v":1,"type":"header","run_id":"r1"}` + "\n" + `{"type":"system","system":"s"}` + "\n"
	for name, path := range map[string]string{
		"missing": filepath.Join(dir, "none.jsonl"),
		"version": write("v2.jsonl", `{"v":2,"type":"header"}`+"\n"),
		"corrupt": write("bad.jsonl", header+"{not json\n"+`{"type":"tree","tree":"t"}`+"\n"),
	} {
		if _, err := Read(path); !errors.Is(err, ErrHistory) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want ErrHistory naming %s", name, err, path)
		}
	}
	h, err := Read(write("cut.jsonl", header+`{"type":"tree","tree":"t1"}`+"\n"+`{"type":"tree","tr`))
	if err != nil || h.LastTree != "t1" {
		t.Errorf("a cut last line: %+v, %v", h, err)
	}
}
