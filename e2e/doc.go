// Package e2e holds the end-to-end tests of `runner exec`: they build the
// runner binary and run it as a user would, against the llm/llmtest fake
// model server (or a recorded cassette), on the bundled example and on a
// real Go module copied from the module cache; and of action.yml, run by
// nektos/act on its self-hosted platform against the fake model and the
// fake GitHub (act_test.go, `make act`). It has no non-test code.
//
// Imports: nothing (its tests build and run the runner binary, and use
// llm/llmtest, github/githubtest and internal/golden).
package e2e
