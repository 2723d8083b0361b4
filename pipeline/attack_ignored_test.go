package pipeline

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/report"
)

// ignoredMakefile plants a payload where the repository ignores files
// (node_modules/.bin/jest, its name split so that no command text names
// it) and changes an ignored local.cfg that was there before.
const ignoredMakefile = "all:\n\t@d=node_modules/.bin; mkdir -p $$d && printf '#!/bin/sh\\necho pwned\\n' > $$d/je''st && chmod +x $$d/je''st\n" +
	"\t@echo x=2 >> local''.cfg\n"

// ignoredRun is what one run of the ignored-writes attack left: the out
// dir, the console, the step summary and the sticky comment's last body.
type ignoredRun struct {
	out, console, stepSummary, comment string
	recs                               []event.Record
}

// runIgnoredAttack runs gateSpec (make allowed) on repo under pin
// (attackPins) as a pull_request run in GitHub Actions with a sticky
// comment (RUNNER_COMMENT=true) against a fake API, the console on.
func runIgnoredAttack(t *testing.T, repo, pin string, isolate bool) ignoredRun {
	t.Helper()
	payload := `{"action":"opened","number":5,"pull_request":{"number":5,"user":{"login":"alice"},"title":"t","head":{"ref":"f","sha":"abc",` +
		`"repo":{"full_name":"octo/hello"}},"base":{"ref":"main"}},"sender":{"login":"alice","type":"User"}}`
	env, _, summary := actionsEnv(t, "pull_request", payload, "RUNNER_COMMENT=true")
	api := githubtest.New(t, "/api/v3")
	allowAuthor(api)
	for i, kv := range env {
		if strings.HasPrefix(kv, "GITHUB_API_URL=") {
			env[i] = "GITHUB_API_URL=" + api.Server.URL + "/api/v3"
		}
	}
	const comments = "/repos/octo/hello/issues/5/comments"
	var mu sync.Mutex
	var body string
	own := func() map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return map[string]any{"id": 9, "body": body, "user": map[string]any{"login": "github-actions[bot]"},
			"html_url": "https://github.com/octo/hello/pull/5#issuecomment-9"}
	}
	capture := func(status int) githubtest.Responder {
		return func(w http.ResponseWriter, r *http.Request) {
			var in struct{ Body string }
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				t.Errorf("comment body: %v", err)
			}
			mu.Lock()
			body = in.Body
			mu.Unlock()
			githubtest.JSON(status, own())(w, r)
		}
	}
	api.Register(http.MethodGet, comments, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		none := body == ""
		mu.Unlock()
		if none {
			githubtest.Page([]any{}, 1, 1)(w, r)
			return
		}
		githubtest.Page([]any{own()}, 1, 1)(w, r)
	}).AnyTimes(2)
	api.Register(http.MethodPost, comments, capture(201))
	api.Register(http.MethodPatch, "/repos/octo/hello/issues/comments/9", capture(200)).AnyTimes(1)
	r := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()}, env: env,
		opts: func(o *ExecOptions) { o.Isolate, o.Quiet, o.Stdout = isolate, false, &bytes.Buffer{} }}.sandboxed(pin).exec(t)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	sum, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("step summary: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return ignoredRun{out: r.out, console: r.stderr, stepSummary: string(sum), comment: body, recs: r.recs}
}

// outputs are the run's outputs by name, as text: the final patch event
// and run.finished (their ignored_written), result.json, summary.md, the
// console, the step summary, the sticky comment and `runner report` in
// both formats (what cmd/runner's report command prints).
func (r ignoredRun) outputs(t *testing.T) map[string]string {
	t.Helper()
	outs := map[string]string{"console": r.console, "step summary": r.stepSummary, "PR comment": r.comment}
	for _, rec := range r.recs {
		p, err := rec.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch v := p.(type) {
		case event.Patch:
			if v.Step == nil {
				outs["patch event"] = string(rec.Raw)
			}
		case event.RunFinished:
			outs["run.finished"] = string(rec.Raw)
		}
	}
	for _, f := range []string{"result.json", "summary.md"} {
		b, err := os.ReadFile(filepath.Join(r.out, f))
		if err != nil {
			t.Fatal(err)
		}
		outs[f] = string(b)
	}
	reps, err := report.LoadChain(t.Context(), filepath.Join(r.out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	outs["runner report"] = report.ChainMarkdown(reps, report.MarkdownOptions{})
	js, err := report.Render(reps, report.FormatJSON, report.MarkdownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	outs["runner report --format json"] = string(js)
	return outs
}

// ignoredOf is the final patch event's and run.finished's ignored_written.
func (r ignoredRun) ignoredOf(t *testing.T) (patch, fin *event.IgnoredWritten) {
	t.Helper()
	for _, rec := range r.recs {
		p, _ := rec.Payload()
		switch v := p.(type) {
		case event.Patch:
			if v.Step == nil {
				patch = v.IgnoredWritten
			}
		case event.RunFinished:
			fin = v.IgnoredWritten
		}
	}
	return patch, fin
}

// TestAttackIgnoredWritesReported: a command writes a payload where the
// repository ignores files (node_modules/.bin/jest) and changes an
// ignored local.cfg: neither is in the patch ("Changes: 0 files"), both
// stay in the work tree, where the next `npm test` outside the sandbox (the
// user's, a later workflow step, a cache save) runs the payload. Under
// every layer and with the sandbox off, every output of the run names
// both: the final patch event and run.finished
// (exactly these two: an ignored file left alone is not listed),
// result.json, summary.md, the console, the step summary, the sticky PR
// comment and `runner report`.
func TestAttackIgnoredWritesReported(t *testing.T) {
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := gittest.Repo(t, map[string]string{".gitignore": "node_modules/\nlocal.cfg\n", "Makefile": ignoredMakefile,
				"local.cfg": "x=1\n", "node_modules/left/index.js": "module.exports = 1\n"})
			run := runIgnoredAttack(t, repo, pin, false)
			if b, err := os.ReadFile(filepath.Join(repo, "node_modules", ".bin", "jest")); err != nil || !strings.Contains(string(b), "pwned") {
				t.Fatalf("make did not write the payload (%v): the attack is broken\n%s", err, run.console)
			}
			if b, _ := os.ReadFile(filepath.Join(repo, "local.cfg")); string(b) != "x=1\nx=2\n" {
				t.Fatalf("local.cfg is %q: make did not change it\n%s", b, run.console)
			}
			want := &event.IgnoredWritten{Paths: []string{"local.cfg", "node_modules/.bin/jest"}, Total: 2}
			patch, fin := run.ignoredOf(t)
			if d := cmp.Diff(want, patch); d != "" {
				t.Errorf("final patch event's ignored_written (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want, fin); d != "" {
				t.Errorf("run.finished's ignored_written (-want +got):\n%s", d)
			}
			outs := run.outputs(t)
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range outs {
					if !yield(k) {
						return
					}
				}
			})
			if len(names) != 9 {
				t.Errorf("outputs %q, want 9", names)
			}
			for _, name := range names {
				for _, p := range want.Paths {
					if !strings.Contains(outs[name], p) {
						t.Errorf("%s does not name %s, which make wrote into an ignored path of the work tree:\n%s", name, p, outs[name])
					}
				}
				if strings.Contains(outs[name], "left/index.js") {
					t.Errorf("%s names node_modules/left/index.js, which nothing wrote:\n%s", name, outs[name])
				}
			}
			if !strings.Contains(outs["summary.md"], "Ignored paths written** | 2 paths, not in the patch") {
				t.Errorf("summary.md has no summary row for the ignored paths written:\n%s", outs["summary.md"])
			}
		})
	}
}

// TestExecIgnoredWrittenIsolate: with --isolate the ignored files the run
// wrote went with the copy ("the work is simply gone"):
// the record says so, and the user's work tree holds no payload.
func TestExecIgnoredWrittenIsolate(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	repo := gittest.Repo(t, map[string]string{".gitignore": "node_modules/\nlocal.cfg\n", "Makefile": ignoredMakefile, "local.cfg": "x=1\n"})
	run := runIgnoredAttack(t, repo, "off", true)
	if _, err := os.Stat(filepath.Join(repo, "node_modules")); !os.IsNotExist(err) {
		t.Errorf("node_modules in the user's work tree after an --isolate run: %v", err)
	}
	want := &event.IgnoredWritten{Paths: []string{"local.cfg", "node_modules/.bin/jest"}, Total: 2, Isolated: true}
	if patch, fin := run.ignoredOf(t); !cmp.Equal(want, patch) || !cmp.Equal(want, fin) {
		t.Errorf("ignored_written: patch %+v, run.finished %+v; want %+v", patch, fin, want)
	}
	outs := run.outputs(t)
	if s := outs["summary.md"]; !strings.Contains(s, "went with the `--isolate` copy") {
		t.Errorf("summary.md does not say the files went with the copy:\n%s", s)
	}
	if s := outs["console"]; !strings.Contains(s, "gone with the --isolate copy") {
		t.Errorf("console does not say the files went with the copy:\n%s", s)
	}
}

// TestExecIgnoredWrittenByToolsAndChecks: a user's run — the model
// "set x=2 in local.cfg and generated build/out.txt" with its own edit
// and write tools, both paths ignored, and a check wrote build/check.log:
// the run is a success with no file in the patch, and its record names
// all three (the tools report their paths, but those are dropped as
// ignored; the check is a command after the agent).
func TestExecIgnoredWrittenByToolsAndChecks(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	repo := gittest.Repo(t, map[string]string{".gitignore": "build/\nlocal.cfg\n", "README": "r\n", "local.cfg": "x=1\n"})
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, `version: 1
name: ign
model: gpt-4.1-mini
prompt: Set x=2 in local.cfg and generate build/out.txt.
permissions:
  read: allow
  edit: allow
sandbox: {mode: off}
limits: {max_steps: 3}
checks:
  - name: build
    run: mkdir -p build && echo ok > build/check.log
`)
	srv := newModel(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{
		llmtest.Call("edit", `{"path":"local.cfg","old_string":"x=1","new_string":"x=2"}`),
		llmtest.Call("write", `{"path":"build/out.txt","content":"generated\n"}`),
	}}.Reply(), llmtest.Turn{Text: "Set x=2 and generated build/out.txt."}.Reply())
	out := t.TempDir()
	res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Stderr: &bytes.Buffer{}, Stdout: &bytes.Buffer{}, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "local.cfg")); string(b) != "x=2\n" {
		t.Fatalf("local.cfg %q: the edit tool did not run", b)
	}
	want := &event.IgnoredWritten{Paths: []string{"build/check.log", "build/out.txt", "local.cfg"}, Total: 3}
	if res.Status != event.StatusSuccess || len(res.Files) != 0 || !cmp.Equal(want, res.IgnoredWritten) {
		t.Errorf("status %s, files %v, ignored_written %+v; want success, no file in the patch, %+v", res.Status, res.Files, res.IgnoredWritten, want)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil || !strings.Contains(string(sum), "`build/check.log`, `build/out.txt`, `local.cfg`.") {
		t.Errorf("summary.md does not name the three (%v):\n%s", err, sum)
	}
}
