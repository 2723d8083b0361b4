// Package batchreport builds the report of `runner batch report`: it reads
// batch out dirs (results.jsonl, manifest.json and the per-repository dirs
// that `runner batch run` and `runner batch merge` write) into a Report and
// renders it as one self-contained HTML page, Markdown or JSON.
//
// Several dirs are either the shards of one night (unmerged shard dirs of
// the same manifest, one shard index each) or several nights of a batch;
// Load groups them (see Load), reports the latest night in full and the
// earlier ones as a trend of success rate and cost.
//
// The HTML page fetches nothing: its charts are inline SVG drawn here, in
// Go, so it reads without JavaScript; a small inline script only sorts and
// filters the repository table. Links to each repository's patch, summary
// and event log are relative to the report file, so they keep working when
// the out dir is uploaded as one artifact with the report inside it.
//
// Layering: batchreport sits above pipeline/batch (whose results and
// manifest it reads) and runner/report (file names); nothing below imports
// it.
//
// Imports: pipeline/batch, runner/event, runner/report and runner/outdir.
package batchreport
