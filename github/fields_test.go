package github

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
)

// TestEventFields: event_fields.txt is the union of the key paths of the
// payload fixtures in testdata/events.
func TestEventFields(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "events", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("fixtures: %v (%d)", err, len(files))
	}
	var all []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, EventFieldsOf(m)...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	text := "# Generated from testdata/events by TestEventFields (go test ./github -run TestEventFields -update).\n" +
		strings.Join(all, "\n") + "\n"
	golden.Check(t, "event_fields.txt", []byte(text))
	for _, want := range []string{"pull_request.head.ref", "issue.number", "comment.body", "inputs", "head_commit.id", "schedule"} {
		if !slices.Contains(EventFields(), want) {
			t.Errorf("EventFields lacks %q", want)
		}
	}
}

func TestContextFields(t *testing.T) {
	got := ContextFields()
	if len(got) < 15 || got[0] != "EventName" || !slices.Contains(got, "Repository") || !slices.Contains(got, "HeadSHA") {
		t.Errorf("ContextFields() = %v", got)
	}
}

// TestDocsListContextFields: every .GitHub field is in the spec page's
// table of template fields.
func TestDocsListContextFields(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "docs", "spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ContextFields() {
		if !strings.Contains(string(readme), "`.GitHub."+f+"`") {
			t.Errorf("docs/spec.md does not list .GitHub.%s", f)
		}
	}
}
