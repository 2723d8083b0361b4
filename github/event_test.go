package github

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
	"github.com/seed43ef5acb/runner/github/githubtest"
)

func readEvent(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "events", file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLoadEventPayloads(t *testing.T) {
	const headSHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	tests := []struct {
		file, name string
		want       Context
	}{
		{"pull_request.opened.json", "pull_request", Context{Action: "opened", Number: 2, IsPR: true, Title: "Update the README with new information.",
			HeadRef: "changes", HeadSHA: headSHA, BaseRef: "master", HeadRepo: "sample-author/Hello-World"}},
		{"pull_request.synchronize.json", "pull_request", Context{Action: "synchronize", Number: 2, IsPR: true, Title: "Update the README with new information.",
			HeadRef: "changes", HeadSHA: headSHA, BaseRef: "master", HeadRepo: "sample-author/Hello-World"}},
		{"pull_request_review_comment.created.json", "pull_request_review_comment", Context{Action: "created", Number: 2, IsPR: true, Title: "Update the README with new information.",
			HeadRef: "changes", HeadSHA: headSHA, BaseRef: "master", HeadRepo: "sample-author/Hello-World",
			CommentID: 284312630, CommentAuthor: "sample-author", CommentBody: "Maybe you should use more emoji on this line."}},
		{"issue_comment.created.issue.json", "issue_comment", Context{Action: "created", Number: 1, Title: "Spelling error in the README file",
			CommentID: 492700400, CommentAuthor: "sample-author", CommentBody: "You are totally right! I'll get this fixed right away."}},
		{"issue_comment.created.pull_request.json", "issue_comment", Context{Action: "created", Number: 3, IsPR: true, Title: "Sample PR title",
			CommentID: 1332698601, CommentAuthor: "sample-commenter", CommentBody: "Changed my mind, this is awful - closing"}},
		{"issues.opened.json", "issues", Context{Action: "opened", Number: 1, Title: "Spelling error in the README file"}},
		{"issues.labeled.json", "issues", Context{Action: "labeled", Number: 1, Title: "Spelling error in the README file"}},
		{"push.json", "push", Context{Ref: "refs/heads/master", SHA: "6113728f27ae82c7b1a177c8d03f9e96e0adf246"}},
		{"push.tag-deleted.json", "push", Context{Ref: "refs/tags/simple-tag", SHA: strings.Repeat("0", 40)}},
		{"schedule.json", "schedule", Context{}},
		{"workflow_dispatch.json", "workflow_dispatch", Context{Ref: "refs/heads/master"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ev, err := LoadEvent(tt.name, readEvent(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := ev.GitHub
			// Repository and sender are checked separately.
			got.Repository, got.Owner, got.Repo, got.Actor, got.ActorType = "", "", "", "", ""
			tt.want.EventName = tt.name
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("context (-want +got):\n%s", d)
			}
			if ev.Event["repository"] == nil {
				t.Error("raw payload lost its repository")
			}
			if ev.GitHub.Owner == "" || ev.GitHub.Repo == "" {
				t.Errorf("owner/repo not split from %q", ev.GitHub.Repository)
			}
		})
	}
}

func TestLoadEventReview(t *testing.T) {
	ev, err := LoadEvent("pull_request_review", []byte(`{"action":"submitted","review":{"id":9,"body":"@runner look","user":{"login":"rev"}},"pull_request":{"number":5,"head":{"ref":"h","sha":"s"},"base":{"ref":"main"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := ev.GitHub; c.Number != 5 || c.CommentID != 9 || c.CommentBody != "@runner look" || c.CommentAuthor != "rev" || c.HeadSHA != "s" {
		t.Errorf("context = %+v", c)
	}
}

func TestLoadEventErrors(t *testing.T) {
	tests := []struct{ name, payload, want string }{
		{"issue_comment", `not json`, "not a JSON object"},
		{"issue_comment", `[1,2]`, "is a JSON array, not an object"},
		{"issue_comment", `{"comment":{"id":1}}`, "no issue.number"},
		{"issue_comment", `{"issue":{"number":4}}`, "no comment"},
		{"issue_comment", `{"issue":{"number":"4"}}`, "issue.number"},
		{"pull_request", `{"number":3}`, "no pull_request.number"},
		{"pull_request_review_comment", `{"pull_request":{"number":3}}`, "no comment"},
		{"", `{}`, "empty event name"},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.payload, func(t *testing.T) {
			_, err := LoadEvent(tt.name, []byte(tt.payload))
			if !errors.Is(err, ErrEvent) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrEvent mentioning %q", err, tt.want)
			}
		})
	}
}

func TestLoadResolvesCommentOnPullRequest(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, "/repos/sample-commenter/github-workflow-event-json/pulls/3", githubtest.JSON(200, map[string]any{
		"number": 3,
		"head":   map[string]any{"ref": "feature", "sha": "abc123", "repo": map[string]any{"full_name": "fork-owner/github-workflow-event-json"}},
		"base":   map[string]any{"ref": "main", "sha": "def456"},
	}))
	env := actionsEnv(t, "issue_comment", "issue_comment.created.pull_request.json")
	ev, err := Load(t.Context(), env, reg.Client())
	if err != nil {
		t.Fatal(err)
	}
	c := ev.GitHub
	if c.Number != 3 || !c.IsPR || c.HeadRef != "feature" || c.HeadSHA != "abc123" || c.BaseRef != "main" || c.HeadRepo != "fork-owner/github-workflow-event-json" {
		t.Errorf("context = %+v", c)
	}
	if c.RunURL != "https://github.com/sample-commenter/github-workflow-event-json/actions/runs/42" || c.SHA != "mergesha" || c.Actor != "env-actor" {
		t.Errorf("env not applied: %+v", c)
	}
}

func TestLoadNeedsNoAPIForOtherEvents(t *testing.T) {
	reg := githubtest.New(t, "/api-v3") // no stubs: any request fails the test
	for _, f := range []struct{ name, file string }{
		{"pull_request", "pull_request.opened.json"},
		{"pull_request_review_comment", "pull_request_review_comment.created.json"},
		{"issue_comment", "issue_comment.created.issue.json"},
		{"issues", "issues.opened.json"},
		{"schedule", "schedule.json"},
		{"push", "push.tag-deleted.json"},
		{"workflow_dispatch", "workflow_dispatch.json"},
	} {
		if _, err := Load(t.Context(), actionsEnv(t, f.name, f.file), reg.Client()); err != nil {
			t.Errorf("%s: %v", f.file, err)
		}
	}
}

func TestEventAsTemplateData(t *testing.T) {
	ev, err := LoadEvent("issue_comment", readEvent(t, "issue_comment.created.issue.json"))
	if err != nil {
		t.Fatal(err)
	}
	tpl := template.Must(template.New("p").Option("missingkey=error").Parse(
		`#{{ .GitHub.Number }} {{ .Event.issue.title }} by {{ .Event.comment.user.login }} ({{ .Event.comment.id }})`))
	var b strings.Builder
	if err := tpl.Execute(&b, ev); err != nil {
		t.Fatal(err)
	}
	if want := "#1 Spelling error in the README file by sample-author (492700400)"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// actionsEnv is an Actions environment for a fixture, with a GITHUB_OUTPUT
// and GITHUB_STEP_SUMMARY in a temp dir.
func actionsEnv(t *testing.T, name, file string) *Env {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "event.json")
	if err := os.WriteFile(path, readEvent(t, file), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := LoadEvent(name, readEvent(t, file))
	if err != nil {
		t.Fatal(err)
	}
	e, err := LoadEnv(map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": path,
		"GITHUB_REPOSITORY": ev.GitHub.Repository, "GITHUB_SHA": "mergesha", "GITHUB_REF": "refs/heads/main",
		"GITHUB_ACTOR": "env-actor", "GITHUB_RUN_ID": "42",
		"GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func FuzzLoadEvent(f *testing.F) {
	for _, name := range []string{"issue_comment.created.pull_request.json", "pull_request.opened.json", "schedule.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "events", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add("issue_comment", data)
	}
	f.Add("pull_request", []byte(`{"pull_request":{"number":1}}`))
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		ev, err := LoadEvent(name, payload)
		if err != nil {
			if !errors.Is(err, ErrEvent) {
				t.Fatalf("error not wrapping ErrEvent: %v", err)
			}
			return
		}
		if ev.GitHub.Number < 0 {
			t.Fatalf("negative number %d", ev.GitHub.Number)
		}
	})
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

func TestContextMap(t *testing.T) {
	ev, err := LoadEvent("issue_comment", readEvent(t, "issue_comment.created.pull_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := ev.GitHub.Map()
	if m["Number"] != 3 || m["IsPR"] != true || m["CommentAuthor"] != "sample-commenter" || m["HeadSHA"] != "" {
		t.Errorf("map = %v", m)
	}
	if n := reflect.TypeOf(Context{}).NumField(); len(m) != n {
		t.Errorf("%d keys, want %d", len(m), n)
	}
	tpl := template.Must(template.New("p").Option("missingkey=error").Parse(`{{ .GitHub.Number }} {{ .GitHub.Repository }}`))
	var b strings.Builder
	if err := tpl.Execute(&b, map[string]any{"GitHub": m}); err != nil || b.String() != "3 sample-commenter/github-workflow-event-json" {
		t.Errorf("got %q, %v", b.String(), err)
	}
}

// TestLoadEventNotJSON: a payload that is not one JSON object fails to
// load with ErrEvent, naming the event and what is wrong with it.
func TestLoadEventNotJSON(t *testing.T) {
	want := map[string]string{
		"empty": "pull_request payload is empty", "text": "pull_request payload is not a JSON object: invalid character",
		"array": "pull_request payload is a JSON array, not an object", "null": "pull_request payload is null",
		"truncated": "pull_request payload is cut short", "trailing": "pull_request payload has more after its JSON object",
		"number-string": "pull_request.number is a JSON string, want a number", "bom": "pull_request payload has no pull_request.number",
	}
	files, err := filepath.Glob(filepath.Join("testdata", "gate", "not-json.*.txt"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("fixtures: %v (%d, want %d)", err, len(files), len(want))
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "not-json."), ".txt")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = LoadEvent("pull_request", data)
			if !errors.Is(err, ErrEvent) || !strings.Contains(err.Error(), want[name]) {
				t.Fatalf("error = %v, want ErrEvent saying %q", err, want[name])
			}
		})
	}
}
