package github

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// actionFile is the composite action at the repository root.
type actionFile struct {
	Inputs  map[string]struct{ Default string } `yaml:"inputs"`
	Outputs map[string]struct{ Value string }   `yaml:"outputs"`
	Runs    struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

func loadAction(t *testing.T) actionFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// TestActionLint checks the action's shape: inputs reach scripts only
// through env, outputs come from the run step and match what the runner
// writes, the runner is started with exec.
func TestActionLint(t *testing.T) {
	a := loadAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q", a.Runs.Using)
	}
	wantInputs := []string{"task", "prompt", "model", "base-url", "api-key", "anthropic-api-key", "github-token", "set", "max-steps", "comment", "pull-request", "trigger", "allow-bots", "allow-events"}
	used := map[string]bool{}
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q interpolates an expression into its script", s.ID)
		}
		for _, v := range s.Env {
			for _, m := range exprRe.FindAllStringSubmatch(v, -1) {
				if name, ok := strings.CutPrefix(m[1], "inputs."); ok {
					used[name] = true
				}
			}
		}
	}
	for _, in := range wantInputs {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("input %q missing", in)
		}
		if !used[in] {
			t.Errorf("input %q is not passed to any step's env", in)
		}
	}
	for name := range a.Inputs {
		if !slices.Contains(wantInputs, name) {
			t.Errorf("unexpected input %q", name)
		}
	}
	for _, name := range OutputNames() {
		want := "${{ steps.finalize.outputs." + name + " || steps.run.outputs." + name + " }}"
		if name == "status" || name == "exit-code" { // a usage error of the prep step sets them too
			want = "${{ steps.finalize.outputs." + name + " || steps.run.outputs." + name + " || steps.prep.outputs." + name + " }}"
		}
		if got := a.Outputs[name].Value; got != want {
			t.Errorf("output %q value = %q, want %q", name, got, want)
		}
	}
	if len(a.Outputs) != len(OutputNames()) {
		t.Errorf("outputs %v, want exactly %v", a.Outputs, OutputNames())
	}
	if fin := stepByID(t, a, "finalize"); !strings.Contains(fin.If, "cancelled()") || !strings.Contains(fin.Run, "github finalize") {
		t.Errorf("finalize step = %+v", fin)
	}
	run := stepByID(t, a, "run")
	if !regexp.MustCompile(`(?m)^\s*exec "\$RUNNER_BIN" `).MatchString(run.Run) {
		t.Errorf("the run step does not exec the runner:\n%s", run.Run)
	}
	// No step may change the caller's toolchain: setup-go would put the
	// action's Go first on PATH for the rest of the job.
	for _, s := range a.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/setup-go@") || strings.Contains(s.Run, "GITHUB_PATH") || strings.Contains(s.Run, "GITHUB_ENV") {
			t.Errorf("step %q changes the caller's PATH or environment", s.ID)
		}
	}
	if !strings.Contains(stepByID(t, a, "build").Run, `"$GITHUB_ACTION_PATH/scripts/install-runner.sh"`) {
		t.Error("build step does not run scripts/install-runner.sh")
	}
}

func stepByID(t *testing.T, a actionFile, id string) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step %q", id)
	return actionStep{}
}

// actionRun executes the action's shell steps the way the Actions runner
// would: expressions in env evaluated from inputs and earlier step outputs,
// one GITHUB_OUTPUT file per step.
type actionRun struct {
	t       *testing.T
	a       actionFile
	inputs  map[string]string
	base    []string // environment of every step
	temp    string
	outputs map[string]map[string]string
	failed  bool
	log     strings.Builder // every step's stdout and stderr
}

func newActionRun(t *testing.T, inputs map[string]string, base map[string]string) *actionRun {
	t.Helper()
	a := loadAction(t)
	r := &actionRun{t: t, a: a, inputs: map[string]string{}, temp: t.TempDir(), outputs: map[string]map[string]string{}}
	for name, in := range a.Inputs {
		r.inputs[name] = in.Default
	}
	r.inputs["github-token"] = "default-token"
	for k, v := range inputs {
		r.inputs[k] = v
	}
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The AppArmor step reads a sysctl file of the test: it must never load a profile on the test machine.
	r.base = []string{"HOME=" + t.TempDir(), "RUNNER_TEMP=" + r.temp, "GITHUB_ACTION_PATH=" + abs, "GITHUB_ACTIONS=true",
		"APPARMOR_USERNS_SYSCTL=" + filepath.Join(r.temp, "no-such-sysctl")}
	for k, v := range base {
		r.base = append(r.base, k+"="+v)
	}
	return r
}

func (r *actionRun) eval(s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string {
		for _, expr := range strings.Split(exprRe.FindStringSubmatch(m)[1], "||") {
			if v := r.evalOne(strings.TrimSpace(expr)); v != "" {
				return v
			}
		}
		return ""
	})
}

// evalOne evaluates one operand of an expression: inputs.NAME,
// steps.ID.outputs.NAME or the action's github.action_ref and
// github.action_repository.
func (r *actionRun) evalOne(expr string) string {
	if name, ok := strings.CutPrefix(expr, "inputs."); ok {
		return r.inputs[name]
	}
	if expr == "github.action_ref" || expr == "github.action_repository" {
		return "" // the action of this checkout, as `uses: ./`
	}
	if rest, ok := strings.CutPrefix(expr, "steps."); ok {
		id, out, _ := strings.Cut(rest, ".outputs.")
		return r.outputs[id][out]
	}
	r.t.Fatalf("expression %q not understood by the test", expr)
	return ""
}

// step runs one shell step and returns its exit code.
func (r *actionRun) step(s actionStep, path string) int {
	r.t.Helper()
	out := filepath.Join(r.temp, "output-"+s.ID+strings.ReplaceAll(s.If, " ", ""))
	env := append(slices.Clone(r.base), "PATH="+path, "GITHUB_OUTPUT="+out)
	for k, v := range s.Env {
		env = append(env, k+"="+r.eval(v))
	}
	cmd := exec.CommandContext(r.t.Context(), "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", s.Run)
	cmd.Env, cmd.Dir = env, r.temp
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	r.log.Write(stderr.Bytes())
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		r.t.Fatalf("step %s: %v", s.ID, err)
	}
	if _, err := os.Stat(out); err == nil && s.ID != "" {
		r.outputs[s.ID] = parseOutputs(r.t, out)
	}
	if code != 0 {
		r.failed = true
		r.t.Logf("step %q exited %d: %s", s.ID, code, stderr.String())
	}
	return code
}

// runAll runs the shell steps in order with the fake go and runner on
// PATH, honouring the finalize step's failure condition.
func (r *actionRun) runAll(path string) {
	for _, s := range r.a.Runs.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/cache@") && strings.Contains(s.If, "steps.plan.outputs.source == 'true'"):
			continue // GitHub's cache of a source build; e2e/act_test.go runs it
		case s.Uses != "":
			r.t.Errorf("step %q uses %s: the action runs no other action but actions/cache", s.ID, s.Uses)
		case s.If != "":
			if r.failed && r.outputs["prep"]["dir"] != "" {
				r.step(s, path)
			}
		case !r.failed:
			r.step(s, path)
		}
	}
}

// actionOutputs evaluates the action's outputs.
func (r *actionRun) actionOutputs() map[string]string {
	got := map[string]string{}
	for name, o := range r.a.Outputs {
		got[name] = r.eval(o.Value)
	}
	return got
}

// fakeGoDir holds a `go` that checks the build command and installs the
// test binary as the runner.
func fakeGoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/bash
set -eu
# The install plan asks where the caches are.
if [ "$1" = env ]; then echo "/fake/go/$2"; exit 0; fi
# A downloaded action (no .git) is stamped with its ref; a checkout gets go's VCS stamp.
stamp="-X github.com/seed43ef5acb/runner/pipeline.stampedVersion=$(basename "$GITHUB_ACTION_PATH")"
[ -e "$GITHUB_ACTION_PATH/.git" ] && stamp=""
want="build -trimpath -ldflags=$stamp -o $RUNNER_TEMP/runner-bin/runner ./cmd/runner"
[ "$GOTOOLCHAIN" = auto ] || { echo "fake go: GOTOOLCHAIN=$GOTOOLCHAIN" >&2; exit 9; }
[ "$*" = "$want" ] || { echo "fake go: got '$*', want '$want'" >&2; exit 9; }
[ "$PWD" = "$GITHUB_ACTION_PATH" ] || { echo "fake go: built in $PWD" >&2; exit 9; }
[ -f go.mod ] || { echo "fake go: no go.mod in $PWD" >&2; exit 9; }
printf '#!/bin/bash\nexec %q "$@"\n' "` + self + `" > "$RUNNER_TEMP/runner-bin/runner"
chmod +x "$RUNNER_TEMP/runner-bin/runner"
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + ":" + os.Getenv("PATH")
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// TestExampleWorkflows checks the example workflows: no expression inside a
// run script, and every input given to the action exists.
func TestExampleWorkflows(t *testing.T) {
	a := loadAction(t)
	files, err := filepath.Glob(filepath.Join("..", "examples", "workflows", "*.yml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("workflows: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []actionStep `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for job, j := range wf.Jobs {
			for i, s := range j.Steps {
				if strings.Contains(s.Run, "${{") {
					t.Errorf("%s: job %s step %d interpolates into its script", f, job, i)
				}
				if !strings.HasPrefix(s.Uses, "seed43ef5acb/runner@") {
					continue
				}
				for in := range s.With {
					if _, ok := a.Inputs[in]; !ok {
						t.Errorf("%s: unknown action input %q", f, in)
					}
				}
			}
		}
	}
}
