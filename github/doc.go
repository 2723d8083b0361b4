// Package github is the runner's GitHub side: the Actions environment and
// event payloads (template data for prompts), the Actions file commands
// (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY), the trigger gate (who may start a
// run from a comment), the sticky tracking comment, and publishing a patch as
// a branch plus a pull request.
//
// The package never reads the process environment: callers pass the environ
// map to LoadEnv. API calls go through a *github.Client from go-github v60
// (built by NewClient, which honours GITHUB_API_URL for GitHub Enterprise
// Server); pushes go through go-git over HTTPS with the token.
//
// Conventions and limits follow the research notes in
// shared/research/github-actions.md (toolkit file-command format, 65,536
// character comment bodies, 1 MiB step summaries, the collaborator
// permission API as the only actor gate).
package github
