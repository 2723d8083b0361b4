package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// TestIgnoredWrittenReported: the final patch event's ignored_written
// reaches the report (JSON) and the Markdown names the first 20 under the
// table, counts the rest and has a summary row; the note is kept when the
// document is cut to fit a comment; a step's patch event does not count.
func TestIgnoredWrittenReported(t *testing.T) {
	var paths []string
	for i := range 25 {
		paths = append(paths, fmt.Sprintf("node_modules/p%02d/index.js", i))
	}
	var buf bytes.Buffer
	w := event.NewWriter(&buf, "run-ign")
	step := 1
	for _, p := range []event.Payload{
		event.RunStarted{Task: "t", Model: "m"},
		event.Patch{Step: &step, Tree: "aa", Files: []event.FileChange{}},
		event.Patch{Tree: "aa", Files: []event.FileChange{}, IgnoredWritten: &event.IgnoredWritten{Paths: paths, Total: 130}},
		event.RunFinished{Status: event.StatusSuccess, FinalMessage: strings.Repeat("long message ", 2000)},
	} {
		if err := w.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := event.ReadLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	js, err := rep.JSON()
	if err != nil || !strings.Contains(string(js), `"total": 130`) || !strings.Contains(string(js), paths[24]) {
		t.Errorf("report JSON has no ignored_written with all 25 paths and total 130 (%v):\n%s", err, js)
	}
	for _, maxLen := range []int{0, 4000} {
		md := rep.Markdown(MarkdownOptions{MaxLen: maxLen})
		for _, want := range []string{"| **Ignored paths written** | 130 paths, not in the patch |",
			"130 paths that git ignores were created or changed during the run", "`" + paths[19] + "`, and 110 more",
			"run untrusted tasks with `--isolate`"} {
			if !strings.Contains(md, want) {
				t.Errorf("max %d: Markdown lacks %q:\n%s", maxLen, want, md)
			}
		}
		if strings.Contains(md, paths[20]) {
			t.Errorf("max %d: Markdown names a 21st path:\n%s", maxLen, md)
		}
	}
}

// TestIgnoredNoteVariants: one file, the --isolate copy, a failed search,
// and none at all.
func TestIgnoredNoteVariants(t *testing.T) {
	for _, tc := range []struct {
		w    *event.IgnoredWritten
		want string
	}{
		{&event.IgnoredWritten{Paths: []string{"local.cfg"}, Total: 1}, "1 path that git ignores was created or changed during the run; no patch holds them and they stay in the work tree"},
		{&event.IgnoredWritten{Paths: []string{"a", "b"}, Total: 2, Isolated: true}, "they went with the `--isolate` copy of the work tree: `a`, `b`."},
		{&event.IgnoredWritten{Paths: []string{}, Error: "walk: context deadline exceeded"}, "could not be searched for files written in paths git ignores (walk: context deadline exceeded)"},
		{nil, ""},
		{&event.IgnoredWritten{Paths: []string{}}, ""},
	} {
		got := Report{IgnoredWritten: tc.w}.ignoredNote()
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: note %q, want it to say %q", tc.w, got, tc.want)
		}
	}
}
