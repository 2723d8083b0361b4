package batch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// checkTask is a task with a required input, an enum and a default.
const checkTask = `version: 1
name: t
model: gpt-4.1-mini
prompt: Review {{ .Inputs.base }} for {{ .Inputs.focus }}.
inputs:
  base: {required: true}
  focus: {enum: [bugs, style], default: bugs}
`

// TestCheckTask: what exec would refuse of a repository's job (exit 2)
// and is knowable from the batch spec is a problem of the batch spec at
// its position: the task spec itself, each
// repository's inputs, the batch's budget on a model with no price, and
// (with the pipeline executor as JobChecker) what exec's setup refuses:
// no model, the sandbox layers, an MCP server's variable. The
// repositories are remote URLs: nothing is contacted.
func TestCheckTask(t *testing.T) {
	t.Parallel()
	const repos = "repos:\n  - url: https://example.com/a.git\n    inputs: {base: main, nosuch: 1}\n" + // lines 4-6
		"  - url: https://example.com/b.git\n" + // line 7
		"  - url: https://example.com/c.git\n    inputs: {base: main, focus: speed}\n" // lines 8-9
	tests := []struct {
		name    string
		task    string // "" = checkTask
		batch   string // after version, name, task (lines 1-3)
		checker JobChecker
		want    []string // the errors, DIR for the temp dir
	}{
		{"inputs", "", repos, nil, []string{
			`DIR/b.yaml:6:26: repos[0].inputs.nosuch: the task (DIR/task.yaml) has no input "nosuch" (declared: base, focus)`,
			`DIR/b.yaml:7:5: repos[1]: the task's input "base" is required (declared at DIR/task.yaml:6:3) (add it to this repository's inputs: {base: VALUE}, or give the input a default in the task)`,
			`DIR/b.yaml:9:33: repos[2].inputs.focus: the value "speed" is not allowed (allowed: bugs, style)`,
		}},
		{"batch budget on the task's unpriced model", strings.Replace(checkTask, "gpt-4.1-mini", "my-llama", 1),
			"repos: [{url: https://example.com/a.git, inputs: {base: x}}]\nlimits: {max_cost_usd: 0.5}\n", nil, []string{
				`DIR/b.yaml:5:24: limits.max_cost_usd is 0.5 USD but model "my-llama" has no price in the catalogue, so its cost is unknown and the budget could never stop the run ` +
					`(add its prices to the task spec, e.g. models: {"my-llama": {input_price_per_million: …, output_price_per_million: …}}, or bound the run with limits.max_tokens instead)`,
			}},
		{"total budget, the model from --model", "",
			"repos: [{url: https://example.com/a.git, inputs: {base: x}}]\nlimits: {total_max_cost_usd: 10}\n",
			&PipelineExecutor{Model: "my-llama", APIKey: "k"}, []string{
				`DIR/b.yaml:5:30: limits.total_max_cost_usd is 10 USD but model "my-llama" has no price in the catalogue, so its cost is unknown and the budget could never stop the run; ` +
					`the model comes from --model or RUNNER_MODEL, not the task (add its prices to the task spec, e.g. models: {"my-llama": {input_price_per_million: …, output_price_per_million: …}}, or bound the run with limits.max_tokens instead)`,
			}},
		{"the task's own budget on an unpriced model", strings.Replace(checkTask, "gpt-4.1-mini", "my-llama", 1) + "limits: {max_cost_usd: 1}\n",
			"repos: [{url: https://example.com/a.git, inputs: {base: x}}]\n", nil, []string{
				`DIR/task.yaml:8:24: limits.max_cost_usd is 1 USD but model "my-llama" has no price in the catalogue, so its cost is unknown and the budget could never stop the run ` +
					`(add its prices to the task spec, e.g. models: {"my-llama": {input_price_per_million: …, output_price_per_million: …}}, or bound the run with limits.max_tokens instead)`,
			}},
		{"an invalid task spec", "version: 1\nname: t\npromt: hi\n", "repos: [https://example.com/a.git]\n", nil, []string{
			"DIR/b.yaml:3:7: task: the repositories' inputs and each job's checks were not run: the task spec has errors (fix them and validate again)",
			`DIR/task.yaml:3:1: unknown key "promt" in the task spec (did you mean "prompt"?)`,
		}},
		{"an invalid task spec beside a batch budget on its unpriced model", strings.Replace(checkTask, "gpt-4.1-mini", "my-llama", 1) + "promt: x\n",
			"repos: [{url: https://example.com/a.git, inputs: {nosuch: x}}]\nlimits: {max_cost_usd: 0.5}\n", &PipelineExecutor{APIKey: "k"}, []string{
				"DIR/b.yaml:3:7: task: the repositories' inputs and each job's checks were not run: the task spec has errors (fix them and validate again)",
				`DIR/b.yaml:5:24: limits.max_cost_usd is 0.5 USD but model "my-llama" has no price in the catalogue, so its cost is unknown and the budget could never stop the run ` +
					`(add its prices to the task spec, e.g. models: {"my-llama": {input_price_per_million: …, output_price_per_million: …}}, or bound the run with limits.max_tokens instead)`,
				`DIR/task.yaml:8:1: unknown key "promt" in the task spec (did you mean "prompt"?)`,
			}},
		{"no model anywhere: once, at the task key", strings.Replace(checkTask, "model: gpt-4.1-mini\n", "", 1),
			"repos:\n  - {url: https://example.com/a.git, inputs: {base: x}}\n  - {url: https://example.com/b.git, inputs: {base: y}}\n",
			&PipelineExecutor{APIKey: "k"}, []string{
				`DIR/b.yaml:3:7: task: exec would refuse the run of every repository: usage error: no model: set model in the task spec, --model or RUNNER_MODEL`,
			}},
		{"sandbox layers pinned to an unknown one", "", "repos: [{url: https://example.com/a.git, inputs: {base: x}}]\n",
			&PipelineExecutor{APIKey: "k", Environ: []string{"RUNNER_SANDBOX_LAYERS=bogus"}}, []string{
				`DIR/b.yaml:3:7: task: exec would refuse the run of every repository: usage error: RUNNER_SANDBOX_LAYERS="bogus": unknown layer "bogus" ` +
					`(use namespaces, landlock or namespaces,landlock; unset it for every available layer)`,
			}},
		{"a sandbox hole that opens the runner's $HOME: in the task spec", checkTask + "sandbox:\n  writable: [$WIDE]\n",
			"repos: [{url: https://example.com/a.git, inputs: {base: x}}]\n",
			&PipelineExecutor{APIKey: "k", Environ: []string{"HOME=/home/u", "WIDE=/home"}}, []string{
				`DIR/task.yaml:9:14: sandbox.writable[0]: "$WIDE" is /home here, which makes the runner's $HOME (/home/u) and all below it ` +
					`(credential stores, shell startup files, other checkouts) writable to every command (` + spec.BroadHint + `)`,
			}},
		{"an MCP server's variable unset: in the task spec", checkTask + "mcp:\n  servers:\n    api: {url: https://mcp.example.com, headers: {Authorization: \"Bearer ${NOPE_TOKEN}\"}}\n",
			"repos: [{url: https://example.com/a.git, inputs: {base: x}}]\n", &PipelineExecutor{APIKey: "k"}, []string{
				`DIR/task.yaml:10:66: mcp.servers.api.headers.Authorization: ${NOPE_TOKEN} is not set in the runner's environment (set it before the run (in GitHub Actions, under env: of the step))`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, filepath.Join(dir, "task.yaml"), cmpOr(tt.task, checkTask))
			path := filepath.Join(dir, "b.yaml")
			write(t, path, "version: 1\nname: b\ntask: task.yaml\n"+tt.batch)
			s, err := LoadSpec(path)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckTask(t.Context(), s, tt.checker)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalidSpec) || pipeline.ExitCode(err) != pipeline.ExitUsage {
				t.Errorf("err %v: not an invalid spec, exit %d", err, pipeline.ExitCode(err))
			}
			got := strings.Split(strings.ReplaceAll(err.Error(), dir, "DIR"), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestCheckTaskInline: an inline task's problems are at the batch file's
// lines and columns, for a block and a flow mapping; one that cannot be
// cut out of the file (the next key on its line) is checked as
// re-encoded, under a name that says so.
func TestCheckTaskInline(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, batch, want string }{
		{"block", "version: 1\nname: b\ntask:\n  version: 1\n  name: t\n  promt: hi\nrepos: [https://example.com/a.git]\n",
			`b.yaml:6:3: unknown key "promt" in the task spec (did you mean "prompt"?)`},
		{"flow", "version: 1\nname: b\ntask: {version: 1, name: t, prompt: hi, limits: {max_steps: ten}}\nrepos: [https://example.com/a.git]\n",
			`b.yaml:3:61: limits.max_steps: expected an integer, got a string`},
		{"a flow root", "{version: 1, name: b, task: {version: 1, name: t, prompt: hi, promt: x}, repos: [https://example.com/a.git]}\n",
			`b.yaml (task, re-encoded):1:35: unknown key "promt" in the task spec (did you mean "prompt"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "b.yaml")
			write(t, path, tt.batch)
			s, err := LoadSpec(path)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckTask(t.Context(), s, nil)
			if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+"/", ""), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRunChecksBeforeCloning: a batch whose jobs exec would refuse stops
// before anything is written or cloned, with exit 2 at the batch spec's
// positions, and the executor is never called: no repository gets a
// final task_failed that a rerun would skip (H2).
func TestRunChecksBeforeCloning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 3, "")
	write(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nprompt: hi\ninputs:\n  name: {}\n  base: {required: true}\n")
	out, cache := filepath.Join(dir, "out"), filepath.Join(dir, "cache")
	fe := newFakeExec(func(string) behaviour { return edit })
	_, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: cache, Executor: fe})
	if pipeline.ExitCode(err) != pipeline.ExitUsage || strings.Count(err.Error(), `the task's input "base" is required`) != 3 ||
		!strings.Contains(err.Error(), spec+":9:13: repos[1]: ") {
		t.Fatalf("err = %v (exit %d), want the missing input of each repository at its entry, exit 2", err, pipeline.ExitCode(err))
	}
	for _, p := range []string{out, cache} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists (stat: %v)", p, err)
		}
	}
	if calls, _, _ := fe.counts(); len(calls) != 0 {
		t.Errorf("Exec called: %v", calls)
	}
}

// TestCheckTaskReplayPrompt: a --replay cassette recorded for another
// prompt is refused for the repositories whose inputs render another
// prompt, each at its entry; the one it fits passes.
func TestCheckTaskReplayPrompt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "task.yaml"), checkTask)
	cassette := filepath.Join(dir, "session.jsonl")
	write(t, cassette, `{"request":{"method":"POST","path":"/v1/chat/completions","headers":null,`+
		`"body":{"messages":[{"role":"system","content":"x"},{"role":"user","content":"Review main for bugs."}]}},`+
		`"response":{"status":200,"headers":{},"body":""}}`+"\n")
	path := filepath.Join(dir, "b.yaml")
	write(t, path, "version: 1\nname: b\ntask: task.yaml\nrepos:\n"+
		"  - {url: https://example.com/a.git, inputs: {base: main}}\n  - {url: https://example.com/b.git, inputs: {base: dev}}\n")
	s, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckTask(t.Context(), s, &PipelineExecutor{Replay: cassette})
	want := path + `:6:5: repos[1]: exec would refuse its run: usage error: --replay ` + cassette +
		` was recorded for another task: its first request asks "Review main for bugs.", this run's prompt is "Review dev for bugs."`
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("err = %v\nwant one error starting %q", err, want)
	}
}
