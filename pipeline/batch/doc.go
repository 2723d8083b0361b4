// Package batch runs one task spec over many repositories: `runner batch
// run`, `runner batch merge` and `runner batch publish`.
//
// A batch spec (LoadSpec) names the task and the repositories. Run freezes
// the repository list into out/manifest.json so that every shard (a GitHub
// Actions matrix job, a Kubernetes Indexed Job pod) sees the same ordered
// list, takes its deterministic slice (ShardIndices), clones each repository
// with go-git into a cache, runs the task in a fresh work tree through an
// Executor, and appends one line per finished repository to
// out/results.jsonl (fsynced, so a killed batch loses no finished result).
// Re-running resumes. Merge fans shard outputs in; Publish opens the pull
// requests afterwards, serially and paced, through a Publisher.
//
// The package never imports cmd, the exec pipeline or the github package:
// it declares the two interfaces it calls (Executor, Publisher) and the
// caller wires the implementations in.
package batch
