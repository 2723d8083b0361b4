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
// Layering: batch sits above the exec pipeline. It declares the two
// interfaces it calls (Executor, Publisher) and ships one implementation of
// each: PipelineExecutor runs the task through the pipeline package
// (executor_pipeline.go) and GitHubPublisher opens pull requests through the
// github package (publisher_github.go): the pull request is planned by
// github.PlanPullRequest, as in `runner exec`. The batch spec is decoded by
// the task spec's positioned decoder (spec.Decoder) and reports spec.Errors.
// pipeline and github never import batch, and batch never imports cmd
// (which reads the environment and wires it in).
//
// Imports: pipeline, pipeline/spec, github, runner (its Backoff),
// runner/event, runner/report, runner/outdir, runner/snapshot (NotRead),
// secret (URL credentials), internal/copytree (the copies of clones and
// results), internal/tempdir (locked temporary directories),
// internal/telemetry; go-git for cloning. Only cmd sits above it.
package batch
