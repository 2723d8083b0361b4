package batch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// JobChecker is an optional capability of an Executor: what it would
// refuse of a job (exit code 2: bad usage, an invalid spec or inputs)
// before running it, found without a work tree. Run calls it once, from
// its own goroutine, after the batch spec is loaded and before the
// manifest is written or anything is cloned (see Check).
type JobChecker interface {
	// JobModel is the model the jobs run with; "" = the task's own.
	JobModel() string
	// CheckJobs returns, for each job (no WorkDir, no OutDir), the error
	// the executor would refuse it with, or nil. task is the batch's task
	// spec, loaded. The batch's cost budget is not in the jobs: Check
	// judges it at its own position in the batch spec.
	CheckJobs(ctx context.Context, task *spec.Spec, jobs []Job) []error
}

// Check checks a batch spec as far as it can be checked before anything
// runs, as `runner validate` does: every local repository is there to
// clone (CheckSources), and the task and each repository's job are ones
// exec would run (CheckTask). Every problem is returned at once, in file
// order, as SpecErrors (matching ErrInvalidSpec: exit code 2); I/O errors
// are returned wrapped.
func Check(ctx context.Context, s *Spec, c JobChecker) error {
	var errs SpecErrors
	if err := CheckSources(s); err != nil && !errors.As(err, &errs) {
		return err
	}
	if err := CheckTask(ctx, s, c); err != nil {
		var te SpecErrors
		if !errors.As(err, &te) {
			return err
		}
		errs = append(errs, te...)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.Sorted()
}

// CheckTask checks the batch's task against every repository entry as
// exec would check each job before it runs, not refuse it with exit code 2
// (Run calls it before it writes or clones anything):
//
//   - the task spec itself: its problems at its own file's positions (an
//     inline task's at the batch file's);
//   - each repository's inputs against the task's: an undeclared one at
//     repos[i].inputs.NAME, a value outside the input's enum at its value,
//     a required one missing at the repository's entry (its inputs);
//   - the batch's limits.max_cost_usd (or total_max_cost_usd) on a model
//     with no price, at the key;
//   - with c (the executor's JobChecker; nil for validate, which judges
//     the task's own model only: pipeline.CheckSpec), whatever c says of
//     each job: at the repository's entry, or once at the batch's task key
//     when every repository gets the same answer; an answer positioned in
//     the task spec as it is.
//
// Every problem is returned at once, in file order, as SpecErrors
// (matching ErrInvalidSpec: exit code 2); I/O errors are returned wrapped.
func CheckTask(ctx context.Context, s *Spec, c JobChecker) error {
	var errs SpecErrors
	task, err := loadTask(s)
	if task == nil {
		return err
	}
	if err != nil && !errors.As(err, &errs) {
		return err
	}
	taskBroken := len(errs) > 0
	m, err := BuildManifest(s)
	if err != nil {
		return err
	}
	model := task.Model
	if c != nil {
		model = cmp.Or(c.JobModel(), task.Model)
	}
	errs = append(errs, budgetProblems(s, task, model, model != task.Model)...)
	if c == nil {
		if err := pipeline.CheckSpec(task); err != nil {
			errs = appendSpecErr(errs, err, posError(s.Position("task")), "task")
		}
	}
	if taskBroken {
		// The inputs a broken task declares, and exec's checks of it, are
		// not known: say what was left unchecked.
		e := posError(s.Position("task"))
		e.Msg = "task: the repositories' inputs and each job's checks were not run: the task spec has errors"
		e.Hint = "fix them and validate again"
		return append(errs, e).Sorted()
	}
	var jobs []Job
	var entries []RepoSpec
	for i, r := range s.Repos {
		if p := inputProblems(task, r); len(p) > 0 {
			errs = append(errs, p...)
			continue
		}
		jobs = append(jobs, Job{RepoID: m.Repos[i].ID, Repo: m.Repos[i], SpecPath: s.Task.Path, SpecInline: s.Task.Inline,
			Inputs: r.Inputs, Timeout: s.Limits.Timeout, LimitsFrom: s.Path, Attempt: 1})
		entries = append(entries, r)
	}
	if c != nil && len(jobs) > 0 {
		answers := c.CheckJobs(ctx, task, jobs)
		if ctx.Err() == nil { // a cancelled check's answers say nothing of the jobs: Run stops anyway
			errs = append(errs, jobProblems(s, entries, answers)...)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.Sorted()
}

// loadTask loads the batch's task spec: its file, or the inline task
// (from Source, at the batch file's positions, else Inline as
// re-encoded). A file that cannot be read is a SpecError at the task key;
// a spec with errors comes with what decoded of it (spec.LoadPartial).
func loadTask(s *Spec) (*spec.Spec, error) {
	switch {
	case s.Task.Path != "":
		data, err := os.ReadFile(s.Task.Path)
		if err != nil {
			e := posError(s.Position("task"))
			e.Msg, e.Hint = fmt.Sprintf("task: %v", err), "the path is relative to the batch file"
			return nil, SpecErrors{e}
		}
		return spec.LoadPartial(cmp.Or(s.Task.Name, s.Task.Path), data)
	case s.Task.Source != nil:
		return spec.LoadPartial(s.Path, s.Task.Source)
	default:
		return spec.LoadPartial(s.Path+" (task, re-encoded)", s.Task.Inline)
	}
}

// budgetProblems refuses the batch's cost budget on a model with no
// price: its cost stays unknown and the budget could never stop a run.
func budgetProblems(s *Spec, task *spec.Spec, model string, overridden bool) SpecErrors {
	key, budget := "limits.max_cost_usd", s.Limits.MaxCostUSD
	if budget <= 0 {
		key, budget = "limits.total_max_cost_usd", s.Limits.TotalMaxCostUSD
	}
	if budget <= 0 || model == "" || pipeline.Priced(task, model) {
		return nil
	}
	e := posError(s.Position(key))
	e.Msg, e.Hint = pipeline.UnpricedBudget(key, budget, model)
	if overridden {
		e.Msg += "; the model comes from --model or RUNNER_MODEL, not the task"
	}
	return SpecErrors{e}
}

// inputProblems checks one repository entry's inputs against the task's,
// each problem at its place in the batch spec.
func inputProblems(task *spec.Spec, r RepoSpec) SpecErrors {
	var out SpecErrors
	for _, p := range task.InputProblems(r.Inputs) {
		var e *SpecError
		switch p.Kind {
		case spec.InputUnknown:
			e = posError(cmp.Or(r.InputPos[p.Name].Key, r.Pos))
			e.Msg, e.Hint = fmt.Sprintf("%s.inputs.%s: the task (%s) has no input %q", r.What, p.Name, task.Path, p.Name), p.Hint
		case spec.InputRequired:
			e = posError(cmp.Or(r.InputsPos, r.Pos))
			e.Msg = fmt.Sprintf("%s: the task's input %q is required (declared at %s)", r.What, p.Name, p.Decl)
			e.Hint = fmt.Sprintf("add it to this repository's inputs: {%s: VALUE}, or give the input a default in the task", p.Name)
			if r.Pos != "" && strings.HasPrefix(r.What, "repos_file") {
				e.Hint = "a repos_file line has no inputs: list the repository under repos: with inputs, or give the input a default in the task"
			}
		default:
			at, what := r.InputPos[p.Name].Value, "the value"
			if at == "" { // the task's default is outside its own enum
				at, what = cmp.Or(p.Decl, r.Pos), "the default"
			}
			e = posError(at)
			e.Msg = fmt.Sprintf("%s.inputs.%s: %s %q is not allowed (allowed: %s)", r.What, p.Name, what, p.Value, strings.Join(p.Allowed, ", "))
		}
		out = append(out, e)
	}
	return out
}

// jobProblems positions the JobChecker's answers (errs[i] for entries[i]):
// problems of the task spec as they are; any other answer at the
// repository's entry, or once at the task key when every repository
// checked got the same one.
func jobProblems(s *Spec, entries []RepoSpec, errs []error) SpecErrors {
	var out SpecErrors
	var generic []int
	for i, err := range errs {
		if err == nil {
			continue
		}
		if p := positioned(err); p != nil {
			out = append(out, p...)
			continue
		}
		generic = append(generic, i)
	}
	if len(generic) == 0 {
		return out
	}
	same := len(generic) == len(entries)
	for _, i := range generic[1:] {
		same = same && errs[i].Error() == errs[generic[0]].Error()
	}
	if same {
		e := posError(s.Position("task"))
		e.Msg = fmt.Sprintf("task: exec would refuse the run of every repository: %v", errs[generic[0]])
		return append(out, e)
	}
	for _, i := range generic {
		e := posError(entries[i].Pos)
		e.Msg = fmt.Sprintf("%s: exec would refuse its run: %v", entries[i].What, errs[i])
		out = append(out, e)
	}
	return out
}

// positioned returns err's problems when err holds positioned spec errors
// (spec.Errors or *spec.Error), else nil.
func positioned(err error) SpecErrors {
	var es SpecErrors
	var e *SpecError
	switch {
	case errors.As(err, &es):
		return es
	case errors.As(err, &e):
		return SpecErrors{e}
	}
	return nil
}

// appendSpecErr appends err's positioned problems, or err at at (prefixed
// with what) when it has none.
func appendSpecErr(out SpecErrors, err error, at *SpecError, what string) SpecErrors {
	if p := positioned(err); p != nil {
		return append(out, p...)
	}
	at.Msg = fmt.Sprintf("%s: %v", what, err)
	return append(out, at)
}
