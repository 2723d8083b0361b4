package github

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runStepIn runs a step's script in dir (prepared by the caller) with fake
// commands first on PATH; it returns the exit code and GITHUB_OUTPUT.
func runStepIn(t *testing.T, dir string, s actionStep, env map[string]string, fakes map[string]string) (int, string) {
	t.Helper()
	bin := t.TempDir()
	for name, script := range fakes {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "output")
	cmd := exec.CommandContext(t.Context(), "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", s.Run)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "GITHUB_OUTPUT=" + out, "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if o, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("run step: %v\n%s", err, o)
	}
	data, _ := os.ReadFile(out)
	return cmd.ProcessState.ExitCode(), string(data)
}

func stepNamed(t *testing.T, j workflowJob, name string) (int, actionStep) {
	t.Helper()
	for i, s := range j.Steps {
		if s.ID == name {
			return i, s
		}
	}
	t.Fatalf("no step with id %q", name)
	return 0, actionStep{}
}

// TestNightlyBatchReport: the merge job writes the HTML report into the
// merged dir (with last night's results for the trend when there are
// some), uploads it with the files it links to, and links the artifact
// from the step summary.
func TestNightlyBatchReport(t *testing.T) {
	merge := loadWorkflow(t, "nightly-batch.yml").Jobs["merge"]
	i, report := stepNamed(t, merge, "report")
	if report.If != "always()" {
		t.Errorf("report step if = %q, want always() (a night with failed repositories needs it most)", report.If)
	}
	fake := map[string]string{"runner": `echo "$*" >>"$HOME/runner-args"; touch merged/report.html`}
	for _, tt := range []struct {
		name     string
		files    []string
		wantArgs string
		wantOut  string
	}{
		{"first night", []string{"merged/results.jsonl"}, "batch report merged --out merged/report.html\n", "html=merged/report.html\n"},
		{"with last night", []string{"merged/results.jsonl", "prev/results.jsonl"}, "batch report prev merged --out merged/report.html\n", "html=merged/report.html\n"},
		{"merge wrote nothing", nil, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out := runStepIn(t, dir, report, nil, fake)
			args, _ := os.ReadFile(filepath.Join(dir, "runner-args"))
			if code != 0 || string(args) != tt.wantArgs || out != tt.wantOut {
				t.Errorf("exit %d, runner %q, output %q; want 0, %q, %q", code, args, out, tt.wantArgs, tt.wantOut)
			}
		})
	}

	upload := merge.Steps[i+1]
	if upload.ID != "upload-report" || !strings.HasPrefix(upload.Uses, "actions/upload-artifact@") ||
		!strings.Contains(upload.If, "steps.report.outputs.html != ''") {
		t.Fatalf("the step after the report = %+v, want the report's upload", upload)
	}
	for _, p := range []string{"merged/report.html", "merged/*/changes.patch", "merged/*/summary.md", "merged/*/events.jsonl"} {
		if !strings.Contains(upload.With["path"], p+"\n") {
			t.Errorf("the report artifact lacks %s (the page links to it): %q", p, upload.With["path"])
		}
	}

	var summary actionStep
	for _, s := range merge.Steps[i:] {
		if strings.Contains(s.Run, "GITHUB_STEP_SUMMARY") {
			summary = s
		}
	}
	if summary.Env["REPORT_URL"] != "${{ steps.upload-report.outputs.artifact-url }}" {
		t.Fatalf("summary step env = %v", summary.Env)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "merged"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "merged", "summary.md"), []byte("## Batch nightly\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stepSummary := filepath.Join(dir, "step-summary.md")
	url := "https://github.com/o/r/actions/runs/1/artifacts/2"
	code, _ := runStepIn(t, dir, summary, map[string]string{"REPORT_URL": url, "GITHUB_STEP_SUMMARY": stepSummary}, nil)
	got, _ := os.ReadFile(stepSummary)
	if code != 0 || !strings.HasPrefix(string(got), "**[Batch report]("+url+")**") || !strings.Contains(string(got), "open `report.html`") ||
		!strings.HasSuffix(string(got), "## Batch nightly\n") {
		t.Errorf("step summary (exit %d):\n%s", code, got)
	}
}
