package github

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

func TestHistoryMarkers(t *testing.T) {
	ref := HistoryRef{WorkflowRun: 42, Artifact: HistoryArtifact("20260101T000000Z-0a1b2c3d"), RunID: "20260101T000000Z-0a1b2c3d"}
	body := "report\n" + HistoryRef{WorkflowRun: 1, Artifact: "old", RunID: "old"}.Marker() + "\n" + ref.Marker() + "\n"
	got, ok := FindHistoryRef(body)
	if !ok || got != ref {
		t.Fatalf("FindHistoryRef = %+v %v, want the last marker %+v", got, ok, ref)
	}
	for _, bad := range []HistoryRef{{WorkflowRun: 0, Artifact: "a", RunID: "b"}, {WorkflowRun: 1, Artifact: "a b", RunID: "b"},
		{WorkflowRun: 1, Artifact: "a", RunID: "--><script>"}} {
		if m := bad.Marker(); m != "" {
			t.Errorf("%+v.Marker() = %q, want none", bad, m)
		}
	}
	if _, ok := FindHistoryRef("<!-- runner:history workflow_run=1 artifact=../x run=y -->"); ok {
		t.Error("a marker naming a path was accepted")
	}
	if !OpenedFor("body\n"+PRMarker("fix-issue")+"\n", "fix-issue") || OpenedFor(PRMarker("fix-issue"), "other") {
		t.Error("OpenedFor does not tell tasks apart")
	}
	if !HasMarker(PRMarker("x")) || !HasMarker(ref.Marker()) {
		t.Error("the markers do not start with the runner's prefix")
	}
}

// TestFetchHistory: the artifact is found among the workflow run's, its
// zip downloaded through the redirect without the token, and only the
// named root files are written (a path outside dir is ignored).
func TestFetchHistory(t *testing.T) {
	api := githubtest.New(t, "/api/v3")
	zip := githubtest.Zip(t, map[string]string{"history.jsonl": "{\"v\":1}\n", "events.jsonl": "{}\n",
		"../escape.txt": "no", "sub/history.jsonl": "no", "tool-output/x.txt": "secret"})
	api.Artifact("octo", "hello", githubtest.Artifact{ID: 9, Name: "runner-history-r1", WorkflowRun: 42, Zip: zip})
	dir := t.TempDir()
	ref := HistoryRef{WorkflowRun: 42, Artifact: "runner-history-r1", RunID: "r1"}
	client := api.Client().WithAuthToken("ghs_0123456789abcdefghijklmnopqrstuvwx")
	if err := FetchHistory(t.Context(), client, nil, "octo", "hello", ref, dir, []string{"history.jsonl", "events.jsonl", "run.patch"}, 0); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "events.jsonl,history.jsonl" {
		t.Errorf("dir holds %v, want only events.jsonl and history.jsonl", names)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "history.jsonl")); string(b) != "{\"v\":1}\n" {
		t.Errorf("history.jsonl = %q", b)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt")); err == nil {
		t.Error("an entry escaped the directory")
	}
}

func TestFetchHistoryFailures(t *testing.T) {
	ref := HistoryRef{WorkflowRun: 42, Artifact: "runner-history-r1", RunID: "r1"}
	names := []string{"history.jsonl"}
	cases := []struct {
		name  string
		stub  func(api *githubtest.Registry)
		limit int64
		want  error
	}{
		{"expired", func(api *githubtest.Registry) {
			api.Artifact("octo", "hello", githubtest.Artifact{ID: 9, Name: ref.Artifact, WorkflowRun: 42, Expired: true})
		}, 0, ErrArtifactExpired},
		{"other name", func(api *githubtest.Registry) {
			api.Register(http.MethodGet, "/repos/octo/hello/actions/runs/42/artifacts", githubtest.JSON(200,
				map[string]any{"total_count": 1, "artifacts": []any{map[string]any{"id": 1, "name": "coverage"}}}))
		}, 0, ErrArtifactNotFound},
		{"run gone", func(api *githubtest.Registry) {
			api.Register(http.MethodGet, "/repos/octo/hello/actions/runs/42/artifacts", githubtest.Error(404, "Not Found"))
		}, 0, ErrArtifactNotFound},
		{"too large", func(api *githubtest.Registry) {
			zip := githubtest.Zip(t, map[string]string{"history.jsonl": strings.Repeat("x", 4096)})
			api.Register(http.MethodGet, "/repos/octo/hello/actions/runs/42/artifacts", githubtest.JSON(200,
				map[string]any{"total_count": 1, "artifacts": []any{map[string]any{"id": 9, "name": ref.Artifact, "size_in_bytes": len(zip)}}}))
		}, 100, ErrArtifactTooLarge},
		{"file over the limit", func(api *githubtest.Registry) {
			api.Artifact("octo", "hello", githubtest.Artifact{ID: 9, Name: ref.Artifact, WorkflowRun: 42,
				Zip: githubtest.Zip(t, map[string]string{"history.jsonl": strings.Repeat("x", 1<<20)})})
		}, 64 << 10, ErrArtifactTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := githubtest.New(t, "")
			tc.stub(api)
			err := FetchHistory(t.Context(), api.Client(), nil, "octo", "hello", ref, t.TempDir(), names, tc.limit)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
