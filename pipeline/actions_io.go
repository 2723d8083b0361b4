package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/runner/event"
)

// Under GitHub Actions, every exit path of `runner exec` ends with the
// step outputs written and the error shown as annotations; the secrets
// the runner knows of are masked before it prints anything.

// maskSecrets writes ::add-mask:: for every secret value the runner knows
// of (the provider key, the GitHub token, every environment variable whose
// name looks secret), before any other output, so GitHub blanks them in
// the log whatever prints them later.
func (r *execRun) maskSecrets() {
	if !r.inActions() {
		return
	}
	w := &workflowcmd.Writer{W: r.opts.Stderr}
	seen := map[string]bool{}
	mask := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= event.MinSecretLen && !seen[v] {
			seen[v] = true
			_ = w.Mask(v)
		}
	}
	mask(r.opts.APIKey)
	for _, kv := range r.opts.Environ {
		// *_PATH names a file (GITHUB_EVENT_PATH matches the "_PAT" marker).
		if name, val, ok := strings.Cut(kv, "="); ok && event.IsSecretName(name) && !strings.HasSuffix(name, "_PATH") {
			mask(val)
		}
	}
}

// setupFailed handles an error of the setup stages (bad usage, an invalid
// spec, a missing key, an unreadable event) under GitHub Actions: each
// problem becomes an ::error annotation, on the spec's file, line and
// column where it names them, and the step outputs say status "error"
// with the exit code. The error returned is marked reported, so the CLI
// does not print it again. Outside Actions err is returned as it is.
func (r *execRun) setupFailed(err error) error {
	if !r.inActions() {
		return err
	}
	for _, a := range errorAnnotations(err, r.getenv("GITHUB_WORKSPACE")) {
		r.annotate(a)
	}
	code := ExitCode(err)
	if serr := r.setupSummary(fmt.Sprintf("failed before it started (exit %d)", code), err.Error()); serr != nil {
		err = errors.Join(err, serr)
	}
	if out := r.getenv("GITHUB_OUTPUT"); out != "" {
		list := github.RunOutputs{Status: event.StatusError, ExitCode: code}.List()
		if werr := github.WriteOutputs(out, list...); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return &ExitError{Code: code, Err: err, Reported: true}
}

// positionedLine is "file:line:col: message", the form of every spec,
// input and template error.
var positionedLine = regexp.MustCompile(`^(\S+?):(\d+):(\d+): (.+)$`)

// errorAnnotations are the ::error annotations of err: one per line that
// names a position (file relative to workspace when under it), else one
// for the whole text.
func errorAnnotations(err error, workspace string) []workflowcmd.Annotation {
	var out []workflowcmd.Annotation
	var rest []string
	for _, line := range strings.Split(err.Error(), "\n") {
		m := positionedLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			if strings.TrimSpace(line) != "" {
				rest = append(rest, strings.TrimSpace(line))
			}
			continue
		}
		out = append(out, workflowcmd.Annotation{Level: workflowcmd.Error, File: repoPath(m[1], workspace),
			Line: atoi(m[2]), Col: atoi(m[3]), Title: "runner: invalid task spec", Message: m[4]})
	}
	if len(out) == 0 || len(rest) > 0 && !strings.HasSuffix(rest[0], ":") {
		out = append([]workflowcmd.Annotation{{Level: workflowcmd.Error, Title: "runner", Message: strings.Join(rest, " ")}}, out...)
	}
	return out
}

// repoPath is file relative to the workspace when it lies under it (GitHub
// places annotations by repository path), else file.
func repoPath(file, workspace string) string {
	if workspace == "" || !filepath.IsAbs(file) {
		return filepath.ToSlash(file)
	}
	rel, err := filepath.Rel(workspace, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(rel)
}

// atoi is strconv.Atoi for the digits the pattern matched.
func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// noTokenWarning says, once, what a run without a token leaves out.
func (r *execRun) noTokenWarning() {
	r.annotate(workflowcmd.Annotation{Level: workflowcmd.Warning, Title: "runner: no token",
		Message: "GITHUB_TOKEN and GH_TOKEN are empty: no GitHub API call is made (no comment, pull request or review); the run goes on"})
}

// setupSummary appends to the step summary (under Actions, when set) why
// the run ended before its report: every exit path leaves the job page a
// line saying what happened. what is "not run" or "failed …"; why is the
// reason or error, shown as text.
func (r *execRun) setupSummary(what, why string) error {
	path := r.getenv("GITHUB_STEP_SUMMARY")
	if !r.inActions() || path == "" {
		return nil
	}
	name := "runner"
	if r.spec != nil && r.spec.Name != "" {
		name = "runner " + r.spec.Name
	}
	if r.redactor != nil {
		why = r.redactor.Redact(why)
	}
	fence := "~~~~"
	md := fmt.Sprintf("### %s: %s\n\n%s\n%s\n%s\n", name, what, fence, strings.ReplaceAll(why, fence, "~ ~ ~ ~"), fence)
	return github.AppendSummary(path, md)
}
