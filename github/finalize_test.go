package github

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

const startedLine = `{"v":1,"seq":1,"time":"2026-01-01T00:00:00Z","run_id":"r","type":"run.started","task":"fix","model":"m1","inputs":{},"limits":{}}`

func writeEvents(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFinalizeIsIdempotent(t *testing.T) {
	events := writeEvents(t, startedLine,
		`{"v":1,"seq":2,"time":"2026-01-01T00:00:01Z","run_id":"r","type":"run.finished","status":"failed","exit_code":1,"final_message":"checks failed","cost_usd":0.5,"patch_path":"/tmp/p.diff"}`)
	reg := githubtest.New(t, "/api-v3")
	s := newSticky(reg)
	s.PerPage = 100
	render := func(_ context.Context, file string) (string, error) { return "REPORT of " + filepath.Base(file), nil }
	final := s.Body("REPORT of events.jsonl")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{comment(6, ActionsBotLogin, Marker("review")+"\n⏳ running")}, 1, 1))
	var sent struct{ Body string }
	reg.Register(http.MethodPatch, "/repos/octo/hello/issues/comments/6", githubtest.Capture(t, &sent, githubtest.JSON(200, comment(6, ActionsBotLogin, final))))
	// The second finalize finds the finished body and edits nothing.
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{comment(6, ActionsBotLogin, final)}, 1, 1))

	dir := t.TempDir()
	for i := range 2 {
		out, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, Sticky: s, Render: render,
			OutputPath: filepath.Join(dir, "out"), SummaryPath: filepath.Join(dir, "summary")})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if out.Status != "failed" || out.ExitCode != 1 || !strings.HasSuffix(out.CommentURL, "-6") || *out.CostUSD != 0.5 {
			t.Errorf("run %d: outputs %+v", i, out)
		}
	}
	if sent.Body != final {
		t.Errorf("comment body = %q", sent.Body)
	}
	got := parseOutputs(t, filepath.Join(dir, "out"))
	if got["status"] != "failed" || got["cost-usd"] != "0.5" || got["patch-path"] != "/tmp/p.diff" || got["events-path"] != events {
		t.Errorf("outputs = %v", got)
	}
}

func TestFinalizeKilledRun(t *testing.T) {
	// No run.finished, and a last line torn by the kill.
	events := writeEvents(t, startedLine, `{"v":1,"seq":2,"type":"te`)
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{}, 1, 1))
	var sent struct{ Body string }
	reg.Register(http.MethodPost, commentsPath, githubtest.Capture(t, &sent, githubtest.JSON(201, comment(8, ActionsBotLogin, "x"))))
	failing := func(context.Context, string) (string, error) { return "", errors.New("renderer broke") }
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // as in a cancelled job: the API calls still go out
	out, err := Finalize(ctx, FinalizeOptions{EventsFile: events, Sticky: newSticky(reg), Render: failing, CreateMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "cancelled" || out.ExitCode != 130 {
		t.Errorf("outputs %+v", out)
	}
	for _, want := range []string{Marker("review"), "cancelled", "task `fix`", "model `m1`", "without its final event"} {
		if !strings.Contains(sent.Body, want) {
			t.Errorf("body lacks %q: %q", want, sent.Body)
		}
	}
}

func TestFinalizeUpdatesOnlyAStartedComment(t *testing.T) {
	events := writeEvents(t, startedLine)
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, "/repos/octo/hello/issues/5/comments", githubtest.Page([]any{comment(1, "alice", "hi")}, 1, 1))
	s := newSticky(reg)
	s.Task = "" // from run.started: "fix"
	out, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, Sticky: s})
	if err != nil || out.CommentURL != "" || s.Task != "fix" {
		t.Errorf("url=%q task=%q err=%v", out.CommentURL, s.Task, err)
	}
}

func TestFinalizeMissingFile(t *testing.T) {
	if _, err := Finalize(t.Context(), FinalizeOptions{EventsFile: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("missing events file not reported")
	}
}

func TestRunOutputsListsEveryName(t *testing.T) {
	got := RunOutputs{Status: "success"}.List()
	if len(got) != len(OutputNames()) || got[0].Value != "success" || got[1].Value != "0" || got[6].Value != "" {
		t.Errorf("list = %v", got)
	}
}

// TestFinalizeOutputsBeforeAPI: the outputs are in GITHUB_OUTPUT before any
// API call, and an API failure afterwards is returned without losing them.
func TestFinalizeOutputsBeforeAPI(t *testing.T) {
	events := writeEvents(t, startedLine,
		`{"v":1,"seq":2,"time":"2026-01-01T00:00:01Z","run_id":"r","type":"run.finished","status":"failed","exit_code":1,"cost_usd":0.5}`)
	outPath := filepath.Join(t.TempDir(), "out")
	broke := errors.New("identity of the token: connection refused")
	var seen map[string]string
	out, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, OutputPath: outPath,
		OpenSticky: func(context.Context) (*Sticky, error) {
			seen = parseOutputs(t, outPath)
			return nil, broke
		}})
	if !errors.Is(err, broke) {
		t.Errorf("err = %v, want the API failure", err)
	}
	if out.Status != "failed" || seen["status"] != "failed" || seen["exit-code"] != "1" || seen["cost-usd"] != "0.5" || seen["events-path"] != events {
		t.Errorf("outputs before the API call = %v (out %+v)", seen, out)
	}
	if _, ok := parseOutputs(t, outPath)["comment-url"]; ok {
		t.Error("comment-url written without a comment")
	}
}

// TestFinalizeIncompleteNote: the report of a log without run.finished
// (the report says "incomplete") explains the cancelled status under its
// heading.
func TestFinalizeIncompleteNote(t *testing.T) {
	tests := []struct {
		name, lines, report, want string
	}{
		{"killed", startedLine, "### ⏳ runner: fix — incomplete\n\nbody\n",
			"### ⏳ runner: fix — incomplete\n\n" + incompleteNote + "body\n"},
		{"finished", startedLine + "\n" + `{"v":1,"seq":2,"type":"run.finished","status":"success","exit_code":0}`,
			"### ✅ runner: fix — success\n\nbody\n", "### ✅ runner: fix — success\n\nbody\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			events := writeEvents(t, tt.lines)
			render := func(context.Context, string) (string, error) { return tt.report, nil }
			summary := filepath.Join(dir, "summary")
			if _, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, Render: render, SummaryPath: summary}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(got), tt.want) {
				t.Errorf("summary = %q\nwant it to hold %q", got, tt.want)
			}
		})
	}
	if !strings.Contains(incompleteNote, "cancelled") || !strings.Contains(incompleteNote, "incomplete") {
		t.Errorf("note %q", incompleteNote)
	}
}

// TestFinalizeDeliveryFailed: finalize agrees with a run whose pull
// request could not be labelled: status delivery_failed, exit code 3, the
// pull request's URL from the log's publish events, and the structured
// output.
func TestFinalizeDeliveryFailed(t *testing.T) {
	events := writeEvents(t, startedLine,
		`{"v":1,"seq":2,"time":"2026-01-01T00:00:01Z","run_id":"r","type":"publish","target":"pull_request","ok":true,"url":"https://github.com/octo/hello/pull/6"}`,
		`{"v":1,"seq":3,"time":"2026-01-01T00:00:01Z","run_id":"r","type":"publish","target":"labels","ok":false,"url":"https://github.com/octo/hello/pull/6","error":"403"}`,
		`{"v":1,"seq":4,"time":"2026-01-01T00:00:02Z","run_id":"r","type":"run.finished","status":"delivery_failed","exit_code":3,"final_message":"done","structured_output":{"verdict":"approve"},"error":{"class":"delivery","message":"labels could not be added: 403"}}`)
	dir := t.TempDir()
	out, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, OutputPath: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	got := parseOutputs(t, filepath.Join(dir, "out"))
	if out.Status != "delivery_failed" || got["status"] != "delivery_failed" || got["exit-code"] != "3" ||
		got["pr-url"] != "https://github.com/octo/hello/pull/6" || got["structured-output"] != `{"verdict":"approve"}` {
		t.Errorf("outputs %v", got)
	}
}

// TestFinalizeCountsDenialsOfAKilledRun: a log cut before run.finished
// still gives the denials and denials-json outputs, from its
// permission.denied lines; an empty list is [].
func TestFinalizeCountsDenialsOfAKilledRun(t *testing.T) {
	denied := `{"v":1,"seq":2,"time":"2026-01-01T00:00:01Z","run_id":"r","type":"permission.denied","step":1,"call_id":"c1","tool":"bash","permission":"bash","pattern":"rm notes.txt","rule":null,"reason":"no rule allows it"}`
	for _, tc := range []struct {
		lines []string
		n     string
		json  string
	}{
		{[]string{startedLine, denied}, "1", `[{"step":1,"call_id":"c1","tool":"bash","permission":"bash","pattern":"rm notes.txt","rule":null,"reason":"no rule allows it"}]`},
		{[]string{startedLine}, "0", `[]`},
	} {
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Finalize(t.Context(), FinalizeOptions{EventsFile: writeEvents(t, tc.lines...), OutputPath: out}); err != nil {
			t.Fatal(err)
		}
		got := parseOutputs(t, out)
		if got["status"] != "cancelled" || got["denials"] != tc.n || got["denials-json"] != tc.json {
			t.Errorf("outputs = %v, want denials %s %s", got, tc.n, tc.json)
		}
	}
}

// TestFinalizeReviewURL: finalize's review-url is the review the log's
// publish events name, also for a log cut before run.finished.
func TestFinalizeReviewURL(t *testing.T) {
	url := "https://github.com/octo/hello/pull/5#pullrequestreview-70"
	events := writeEvents(t, startedLine,
		`{"v":1,"seq":2,"time":"2026-01-01T00:00:01Z","run_id":"r","type":"publish","target":"review","ok":true,"url":"`+url+
			`","review":{"url":"`+url+`","event":"COMMENT","inline":2,"in_body":1}}`)
	dir := t.TempDir()
	out, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, OutputPath: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	if got := parseOutputs(t, filepath.Join(dir, "out")); out.ReviewURL != url || got["review-url"] != url || got["status"] != "cancelled" {
		t.Errorf("outputs %v", got)
	}
}
