package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestMain lets the test binary act as the runner the action starts (see
// fakeGoDir): with RUNNER_FAKE_HELPER=1 it behaves like `runner exec` in
// Actions does with this package: load the environment and the event,
// gate the trigger, write the outputs.
func TestMain(m *testing.M) {
	if os.Getenv("RUNNER_FAKE_HELPER") == "1" {
		os.Exit(fakeRunner(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// record is what the fake runner saw.
type record struct {
	Args []string
	Env  map[string]string
}

func fakeRunner(args []string) int {
	environ := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		environ[k] = v
	}
	rec := record{Args: args, Env: map[string]string{}}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "GITHUB_TOKEN", "RUNNER_MODEL", "RUNNER_COMMENT", "RUNNER_PULL_REQUEST", "RUNNER_TRIGGER", "RUNNER_ALLOW_BOTS"} {
		rec.Env[k] = environ[k]
	}
	for k, v := range environ { // the inputs' carriers must not reach the runner
		if strings.HasPrefix(k, "RUNNER_INPUT_") {
			rec.Env[k] = v
		}
	}
	name := "exec.json"
	if len(args) > 0 && args[0] == "github" {
		name = "finalize.json"
	}
	data, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(environ["RUNNER_TEMP"], name), data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if name == "exec.json" {
		return fakeExec(args, environ)
	}
	// github finalize --events FILE, with the comment turned off: the
	// outputs come from the event log as in the real command.
	if _, err := Finalize(context.Background(), FinalizeOptions{EventsFile: args[3], OutputPath: environ["GITHUB_OUTPUT"]}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

func fakeExec(args []string, environ map[string]string) int {
	ctx := context.Background()
	env, err := LoadEnv(environ)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	client, err := NewClient(env, nil)
	if err == nil {
		var ev *Event
		if ev, err = Load(ctx, env, client); err == nil {
			var d Decision
			d, err = Gate(ctx, client, ev, GateOptions{Trigger: environ["RUNNER_TRIGGER"],
				AllowBots: strings.Split(environ["RUNNER_ALLOW_BOTS"], ","), SelfLogin: ActionsBotLogin})
			if err == nil && !d.Run {
				fmt.Fprintln(os.Stderr, "runner:", d.Reason)
				return writeOut(env, d.Outputs(), 0)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	out := args[slices.Index(args, "--out")+1]
	events := filepath.Join(out, "events.jsonl")
	if environ["FAKE_KILLED"] == "1" { // killed mid-run: no run.finished, no outputs
		_ = os.WriteFile(events, []byte(startedLine+"\n"+`{"v":1,"seq":2,"ty`), 0o644)
		return 143
	}
	code, _ := strconv.Atoi(environ["FAKE_EXIT"])
	cost := 0.25
	res := RunOutputs{Status: map[bool]event.Status{true: event.StatusSuccess, false: event.StatusFailed}[code == 0], ExitCode: code,
		EventsPath: events, CostUSD: &cost, CommentURL: "https://example/c"}
	finished := fmt.Sprintf(`{"v":1,"seq":2,"time":"2026-01-01T00:00:01Z","run_id":"r","type":"run.finished","status":%q,"exit_code":%d,"cost_usd":0.25}`, res.Status, code)
	if err := os.WriteFile(events, []byte(startedLine+"\n"+finished+"\n"), 0o644); err != nil {
		return 3
	}
	return writeOut(env, res.List(), code)
}

func writeOut(env *Env, outs []Output, code int) int {
	if err := WriteOutputs(env.Output, outs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return code
}

func eventEnv(t *testing.T, name, file, apiURL string) map[string]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, readEvent(t, file), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := LoadEvent(name, readEvent(t, file))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RUNNER_FAKE_HELPER": "1", "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": path,
		"GITHUB_REPOSITORY": ev.GitHub.Repository, "GITHUB_ACTOR": ev.GitHub.Actor, "GITHUB_RUN_ID": "5"}
	if apiURL != "" {
		env["GITHUB_API_URL"], env["GITHUB_SERVER_URL"] = apiURL+"/api/v3", apiURL
	}
	return env
}

func TestActionRunsTaskWithInputs(t *testing.T) {
	t.Parallel()
	reg := githubtest.New(t, "/api/v3") // the gate reads the pull request author's permission
	reg.Register(http.MethodGet, "/repos/sample-author/Hello-World/collaborators/sample-author/permission",
		githubtest.JSON(200, map[string]any{"permission": "write", "role_name": "write"}))
	reg.Register(http.MethodGet, "/user", githubtest.JSON(200, map[string]any{"login": "runner-app[bot]"})).AnyTimes(0)
	base := eventEnv(t, "pull_request", "pull_request.opened.json", reg.Server.URL)
	r := newActionRun(t, map[string]string{"task": "examples/review/task.yaml",
		"set":   "base=origin/main\r\n\n   \nfocus=security $(touch PWNED) \"q\"\nlast=no-newline",
		"model": "m1", "base-url": "http://llm.example/v1", "api-key": "sk-secret", "max-steps": "7", "comment": "true",
		"pull-request": "false", "trigger": "@runner", "allow-bots": "renovate"}, base)
	r.runAll(fakeGoDir(t))
	if r.failed {
		t.Fatal("a step failed")
	}
	dir := r.outputs["prep"]["dir"]
	var rec record
	readJSONFile(t, filepath.Join(r.temp, "exec.json"), &rec)
	want := []string{"exec", "examples/review/task.yaml", "--out", dir, "--max-steps", "7",
		"--set", "base=origin/main", "--set", `focus=security $(touch PWNED) "q"`, "--set", "last=no-newline"}
	if !slices.Equal(rec.Args, want) {
		t.Errorf("args = %q\nwant   %q", rec.Args, want)
	}
	wantEnv := map[string]string{"OPENAI_API_KEY": "sk-secret", "OPENAI_BASE_URL": "http://llm.example/v1", "GITHUB_TOKEN": "default-token",
		"RUNNER_MODEL": "m1", "RUNNER_COMMENT": "true", "RUNNER_PULL_REQUEST": "false", "RUNNER_TRIGGER": "@runner", "RUNNER_ALLOW_BOTS": "renovate"}
	for k, v := range wantEnv {
		if rec.Env[k] != v {
			t.Errorf("env %s = %q, want %q", k, rec.Env[k], v)
		}
	}
	if slices.ContainsFunc(rec.Args, func(a string) bool { return strings.Contains(a, "sk-secret") }) {
		t.Error("API key on the command line")
	}
	if _, err := os.Stat(filepath.Join(r.temp, "PWNED")); err == nil {
		t.Error("an input was executed as shell")
	}
	got := r.actionOutputs()
	if got["status"] != "success" || got["exit-code"] != "0" || got["events-path"] != filepath.Join(dir, "events.jsonl") ||
		got["cost-usd"] != "0.25" || got["comment-url"] != "https://example/c" || got["pr-url"] != "" {
		t.Errorf("action outputs = %v", got)
	}
	if _, err := os.Stat(filepath.Join(r.temp, "finalize.json")); err == nil {
		t.Error("finalize ran after a successful run")
	}
}

func TestActionInlinePrompt(t *testing.T) {
	t.Parallel()
	prompt := "  leading spaces kept\nkey: value & {{ .GitHub.Number }}\n\n\"quotes\" 'single' $(x) `y` ${HOME}\n# not a comment"
	r := newActionRun(t, map[string]string{"prompt": prompt, "model": "m1"}, eventEnv(t, "schedule", "schedule.json", ""))
	r.runAll(fakeGoDir(t))
	if r.failed {
		t.Fatal("a step failed")
	}
	var rec record
	readJSONFile(t, filepath.Join(r.temp, "exec.json"), &rec)
	task := filepath.Join(r.outputs["prep"]["dir"], "prompt-input.yaml")
	if len(rec.Args) < 2 || rec.Args[1] != task {
		t.Fatalf("args = %q", rec.Args)
	}
	data, err := os.ReadFile(task)
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Version     int
		Name        string
		Prompt      string
		Permissions map[string]string
	}
	if err := yaml.Unmarshal(data, &spec); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	// Template delimiters are escaped; action_prompt_test.go renders them.
	if spec.Version != 1 || spec.Name != "inline" || spec.Prompt != strings.ReplaceAll(prompt, "{{", `{{"{{"}}`) || spec.Permissions["read"] != "allow" || len(spec.Permissions) != 1 {
		t.Errorf("spec = %+v\nfile:\n%s", spec, data)
	}
}

func TestActionRefusedTriggerWritesStatus(t *testing.T) {
	t.Parallel()
	reg := githubtest.New(t, "/api/v3") // GHES-style API prefix
	reg.Register(http.MethodGet, "/repos/sample-author/Hello-World/collaborators/sample-author/permission",
		githubtest.JSON(200, map[string]any{"permission": "read", "role_name": "triage"}))
	r := newActionRun(t, map[string]string{"task": "t.yaml"}, eventEnv(t, "issue_comment", "issue_comment.created.issue.json", reg.Server.URL))
	r.runAll(fakeGoDir(t))
	if r.failed {
		t.Fatal("a step failed")
	}
	got := r.actionOutputs()
	if got["status"] != StatusRefused || got["exit-code"] != "0" || got["events-path"] != "" {
		t.Errorf("outputs = %v", got)
	}
	if _, err := os.Stat(filepath.Join(r.outputs["prep"]["dir"], "events.jsonl")); err == nil {
		t.Error("a refused trigger started a run")
	}
}

func TestActionFailedRunIsFinalized(t *testing.T) {
	t.Parallel()
	base := eventEnv(t, "workflow_dispatch", "workflow_dispatch.json", "")
	base["FAKE_EXIT"] = "1"
	r := newActionRun(t, map[string]string{"task": "t.yaml", "github-token": "tok-2"}, base)
	r.runAll(fakeGoDir(t))
	got := r.actionOutputs()
	if got["status"] != "failed" || got["exit-code"] != "1" {
		t.Errorf("outputs = %v", got)
	}
	var rec record
	readJSONFile(t, filepath.Join(r.temp, "finalize.json"), &rec)
	want := []string{"github", "finalize", "--events", filepath.Join(r.outputs["prep"]["dir"], "events.jsonl")}
	if !slices.Equal(rec.Args, want) || rec.Env["GITHUB_TOKEN"] != "tok-2" {
		t.Errorf("finalize args %q env %v", rec.Args, rec.Env)
	}
	if r.outputs["finalize"]["status"] != "failed" {
		t.Errorf("finalize step outputs = %v", r.outputs["finalize"])
	}
}

// TestActionKilledRunReportsFinalize: a run killed before it wrote its
// outputs gets them from the finalize step (status cancelled, exit 130).
func TestActionKilledRunReportsFinalize(t *testing.T) {
	t.Parallel()
	base := eventEnv(t, "workflow_dispatch", "workflow_dispatch.json", "")
	base["FAKE_KILLED"] = "1"
	r := newActionRun(t, map[string]string{"task": "t.yaml"}, base)
	r.runAll(fakeGoDir(t))
	if r.outputs["run"] != nil {
		t.Fatalf("the killed run wrote outputs: %v", r.outputs["run"])
	}
	got := r.actionOutputs()
	events := filepath.Join(r.outputs["prep"]["dir"], "events.jsonl")
	if got["status"] != "cancelled" || got["exit-code"] != "130" || got["events-path"] != events || got["cost-usd"] != "" {
		t.Errorf("action outputs = %v", got)
	}
}

func TestActionTaskAndPromptConflict(t *testing.T) {
	t.Parallel()
	for _, in := range []map[string]string{{"task": "t.yaml", "prompt": "p"}, {}} {
		r := newActionRun(t, in, eventEnv(t, "schedule", "schedule.json", ""))
		r.runAll(fakeGoDir(t))
		if !r.failed || r.outputs["prep"]["dir"] != "" {
			t.Errorf("%v: prep should fail before making a dir", in)
		}
		if _, err := os.Stat(filepath.Join(r.temp, "exec.json")); err == nil {
			t.Errorf("%v: the runner ran", in)
		}
		if got := r.actionOutputs(); got["status"] != "error" || got["exit-code"] != "2" {
			t.Errorf("%v: outputs %v, want status error, exit-code 2", in, got)
		}
	}
}
