// Package github is the runner's GitHub side: the Actions environment and
// event payloads (template data for prompts), the Actions file commands
// (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY), the trigger gate (who may start a
// run from a comment), the sticky tracking comment, publishing a patch as
// a branch plus a pull request, and review mode: a structured review's
// findings as one pull request review with line comments.
//
// The package never reads the process environment: callers pass the environ
// map to LoadEnv or Setup. API calls go through a *github.Client from
// go-github v60 (built by NewClient, which honours GITHUB_API_URL for GitHub
// Enterprise Server); pushes go through go-git over HTTPS with the token.
//
// # Use in `runner exec`
//
//	a, err := github.Setup(ctx, environ, nil)      // nil, nil outside Actions
//	d, err := a.Gate(ctx, trigger, allowBots, allowEvents) // RUNNER_TRIGGER, RUNNER_ALLOW_BOTS, RUNNER_ALLOW_EVENTS
//	if !d.Run {                                     // no model call
//		fmt.Fprintln(stderr, "runner:", d.Reason)
//		return github.WriteOutputs(a.Env.Output, d.Outputs()...)
//	}
//	data := a.Event                                 // {{ .Event.… }}, {{ .GitHub.… }}
//	s, err := a.Sticky(ctx, spec.Name)              // ErrNoNumber: no issue or PR
//	url, err := s.Start(ctx, a.Env.RunURL())
//	… run …
//	url, err = s.Finish(ctx, reportMarkdown)
//	err = github.AppendSummary(a.Env.StepSummary, reportMarkdown)
//	url, n, created, err := a.PublishPullRequest(ctx, github.PushOptions{…}, github.PROptions{…})
//	err = github.WriteOutputs(a.Env.Output, github.RunOutputs{…}.List()...)
//
// # Review mode
//
//	files, err := github.PullRequestFiles(ctx, client, owner, repo, n) // hunks by head path
//	f, err := github.ParseFindings(structuredOutput)                  // verdict, summary, findings
//	plan := github.PlanReview(task, headSHA, f, files)                // line comments and body findings
//	rv := &github.Reviewer{Client: client, Owner: owner, Repo: repo, Number: n, Self: self}
//	out, err := rv.Post(ctx, plan) // ErrReadOnly (403), ErrReviewRetire, ErrReview
//
// Post keeps one live review per task: see Reviewer for how a re-run
// updates or replaces it.
//
// `runner github finalize --events FILE` (the action's `if: cancelled() ||
// failure()` step) calls Finalize with the sticky comment of the event (task
// name taken from the events file) and the report renderer.
//
// # The action's contract with the CLI
//
// action.yml runs `runner exec TASK --out DIR [--max-steps N] [--set K=V]...`
// and passes everything else in the environment: RUNNER_MODEL,
// OPENAI_BASE_URL, OPENAI_API_KEY, GITHUB_TOKEN, and RUNNER_COMMENT,
// RUNNER_PULL_REQUEST ("true", "false" or "" for the spec's setting),
// RUNNER_TRIGGER and RUNNER_ALLOW_BOTS. The runner writes the outputs named
// by OutputNames to GITHUB_OUTPUT.
//
// Conventions and limits follow the research notes in
// shared/research/github-actions.md (toolkit file-command format, 65,536
// character comment bodies, 1 MiB step summaries, the collaborator
// permission API as the only actor gate).
//
// Imports: runner/event, runner/report (NoMentions), internal/httpguard
// and go-github, go-git, backoff; it is the only package that imports
// go-github. pipeline and pipeline/batch sit above it.
package github
