package github

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// workflowFile is the part of a workflow the tests read.
type workflowFile struct {
	Jobs map[string]workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	Needs   any               `yaml:"needs"`
	If      string            `yaml:"if"`
	Outputs map[string]string `yaml:"outputs"`
	Steps   []actionStep      `yaml:"steps"`
}

func loadWorkflow(t *testing.T, name string) workflowFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "examples", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflowFile
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

// TestWorkflowsUploadHiddenFiles: batch out dirs hold changed dotfiles
// (<id>/tree/.gitignore, .github/*); an artifact without them would make
// publish delete those files in the pull request.
func TestWorkflowsUploadHiddenFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "workflows", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	uploads := 0
	for _, f := range files {
		for job, j := range loadWorkflow(t, filepath.Base(f)).Jobs {
			for i, s := range j.Steps {
				if !strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
					continue
				}
				uploads++
				if s.With["include-hidden-files"] != "true" {
					t.Errorf("%s: job %s step %d uploads without include-hidden-files: true", f, job, i)
				}
			}
		}
	}
	if uploads < 3 {
		t.Errorf("found %d uploads, want the nightly batch's shard, merged and published", uploads)
	}
}

// runScript runs a workflow step's script with fake commands first on PATH
// and returns its exit code and GITHUB_OUTPUT.
func runScript(t *testing.T, s actionStep, env map[string]string, fakes map[string]string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, script := range fakes {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "output")
	cmd := exec.CommandContext(t.Context(), "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", s.Run)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "GITHUB_OUTPUT=" + out, "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	_ = cmd.Run()
	data, _ := os.ReadFile(out)
	return cmd.ProcessState.ExitCode(), string(data)
}

func jobStep(t *testing.T, j workflowJob, name string) actionStep {
	t.Helper()
	for _, s := range j.Steps {
		if s.ID == name || strings.HasPrefix(s.Run, name) {
			return s
		}
	}
	t.Fatalf("no step %q", name)
	return actionStep{}
}

// TestNightlyBatchPublishesDespiteFailedRepos: a night where some
// repositories failed still publishes the others and then fails in the
// verdict job; a merge that could not complete publishes nothing.
func TestNightlyBatchPublishesDespiteFailedRepos(t *testing.T) {
	wf := loadWorkflow(t, "nightly-batch.yml")
	merge := wf.Jobs["merge"]
	if merge.Outputs["failed-repos"] != "${{ steps.merge.outputs.failed-repos }}" {
		t.Errorf("merge outputs = %v", merge.Outputs)
	}
	step := jobStep(t, merge, "merge")
	for _, tt := range []struct {
		exit     string
		wantCode int
		wantOut  string
	}{{"0", 0, "failed-repos=false\n"}, {"1", 0, "failed-repos=true\n"}, {"3", 3, ""}} {
		code, out := runScript(t, step, nil, map[string]string{"runner": `[ "$1 $2" = "batch merge" ] || exit 9; exit ` + tt.exit})
		if code != tt.wantCode || out != tt.wantOut {
			t.Errorf("merge exit %s: step exit %d output %q, want %d %q", tt.exit, code, out, tt.wantCode, tt.wantOut)
		}
	}
	publish := wf.Jobs["publish"]
	for _, want := range []string{"!cancelled()", "needs.merge.result == 'success'"} {
		if !strings.Contains(publish.If, want) {
			t.Errorf("publish if %q lacks %q", publish.If, want)
		}
	}
	verdict := wf.Jobs["verdict"]
	needs, _ := verdict.Needs.([]any)
	if verdict.If != "always()" || !slices.Contains(needs, any("publish")) || !slices.Contains(needs, any("merge")) {
		t.Fatalf("verdict job = %+v", verdict)
	}
	for _, tt := range []struct {
		merge, publish, failed string
		want                   int
	}{
		{"success", "success", "false", 0},
		{"success", "skipped", "false", 0},
		{"success", "success", "true", 1},
		{"success", "failure", "false", 1},
		{"failure", "skipped", "", 1},
	} {
		code, _ := runScript(t, verdict.Steps[0], map[string]string{"MERGE": tt.merge, "PUBLISH": tt.publish, "FAILED_REPOS": tt.failed}, nil)
		if code != tt.want {
			t.Errorf("verdict %+v: exit %d", tt, code)
		}
	}
}

// TestK8sMergeJobPublishesDespiteFailedRepos: the merge Job's init
// containers merge with --fail-on none and publish; the last container
// decides (default --fail-on) and fails the Job without a retry.
func TestK8sMergeJobPublishesDespiteFailedRepos(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "k8s", "merge-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Name string
		Args []string
	}
	var job struct {
		Spec struct {
			PodFailurePolicy struct {
				Rules []struct {
					Action      string
					OnExitCodes struct {
						ContainerName string `yaml:"containerName"`
						Operator      string
						Values        []int
					} `yaml:"onExitCodes"`
				}
			} `yaml:"podFailurePolicy"`
			Template struct {
				Spec struct {
					RestartPolicy  string      `yaml:"restartPolicy"`
					InitContainers []container `yaml:"initContainers"`
					Containers     []container
				}
			}
		}
	}
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	if len(pod.InitContainers) != 2 || len(pod.Containers) != 1 || pod.RestartPolicy != "Never" {
		t.Fatalf("pod = %+v", pod)
	}
	merge, publish, verdict := pod.InitContainers[0].Args, pod.InitContainers[1].Args, pod.Containers[0]
	if !slices.Equal(merge[:2], []string{"batch", "merge"}) || !strings.Contains(strings.Join(merge, " "), "--fail-on none") {
		t.Errorf("merge args = %q, want --fail-on none", merge)
	}
	if !slices.Equal(publish[:2], []string{"batch", "publish"}) {
		t.Errorf("publish args = %q", publish)
	}
	if !slices.Equal(verdict.Args[:2], []string{"batch", "merge"}) || slices.Contains(verdict.Args, "--fail-on") {
		t.Errorf("verdict args = %q, want the default --fail-on", verdict.Args)
	}
	rules := job.Spec.PodFailurePolicy.Rules
	if len(rules) != 1 || rules[0].Action != "FailJob" || rules[0].OnExitCodes.ContainerName != verdict.Name ||
		rules[0].OnExitCodes.Operator != "In" || !slices.Equal(rules[0].OnExitCodes.Values, []int{1}) {
		t.Errorf("podFailurePolicy = %+v", rules)
	}
}

// TestK8sShardJobEndsEitherWay: the shard Job's maxFailedIndexes can
// trigger (below completions), and the documented wait ends on Complete or
// Failed, never on a fixed timeout alone.
func TestK8sShardJobEndsEitherWay(t *testing.T) {
	for _, f := range []string{"batch-job.yaml", "merge-job.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", "k8s", f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, "--for=condition=complete") || !strings.Contains(text, "Complete|Failed") {
			t.Errorf("%s: the wait must end on Complete or Failed", f)
		}
		if strings.Contains(text, "plus git") {
			t.Errorf("%s: the image needs no git", f)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "examples", "k8s", "batch-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var doc struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Completions      int  `yaml:"completions"`
				MaxFailedIndexes *int `yaml:"maxFailedIndexes"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind == "Job" && doc.Spec.MaxFailedIndexes != nil && *doc.Spec.MaxFailedIndexes >= doc.Spec.Completions {
			t.Errorf("maxFailedIndexes %d >= completions %d: it can never trigger", *doc.Spec.MaxFailedIndexes, doc.Spec.Completions)
		}
	}
}

// TestExampleWorkflowTasksExist: a workflow's task: .github/runner/X.yaml
// has its spec beside it (examples/workflows/X.yaml), or the workflow names
// the example spec to copy there (examples/…/task.yaml), which exists.
func TestExampleWorkflowTasksExist(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "workflows", "*.yml"))
	re := regexp.MustCompile(`(?m)^\s+task:\s*(\S+)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			task := m[1]
			beside := filepath.Join(filepath.Dir(f), filepath.Base(task))
			inRepo := filepath.Join("..", task)
			if _, err := os.Stat(beside); err == nil {
				continue
			}
			if _, err := os.Stat(inRepo); err == nil {
				continue
			}
			named := regexp.MustCompile(`examples/[\w./-]+\.yaml`).FindString(string(data))
			if _, err := os.Stat(filepath.Join("..", named)); named == "" || err != nil {
				t.Errorf("%s: task %s is not beside the workflow (%s) and no example spec to copy is named", f, task, beside)
			}
		}
	}
}
