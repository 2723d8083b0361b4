// Package snapshot records a work tree as git trees in a private object
// store with go-git plumbing, and diffs any two trees into a patch that
// `git apply` accepts. It never writes into the user's repository.
package snapshot
