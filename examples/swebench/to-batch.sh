#!/usr/bin/env bash
# to-batch.sh DATASET.jsonl [TASK.yaml] > batch.yaml
#
# Turns SWE-bench dataset rows (one JSON object per line with instance_id,
# repo, base_commit and problem_statement, e.g. the output of
#   python -c 'from datasets import load_dataset; load_dataset("princeton-nlp/SWE-bench_Lite", split="test").to_json("lite.jsonl")'
# ) into a batch spec: one repository per instance at its base commit, the
# issue text as the problem_statement input. The output is JSON, which is
# YAML too, so `runner validate` and `runner batch run` read it as is.
set -euo pipefail
dataset=${1:?usage: to-batch.sh DATASET.jsonl [TASK.yaml] > batch.yaml}
task=${2:-task.yaml}
jq -s --arg task "$task" '{
  version: 1,
  name: "swe-bench",
  task: $task,
  concurrency: 4,
  clone: {depth: 0},
  limits: {timeout: "30m", max_cost_usd: 2},
  retries: 2,
  repos: [.[] | {
    url: ("https://github.com/" + .repo),
    ref: .base_commit,
    id: .instance_id,
    inputs: {instance_id: .instance_id, problem_statement: .problem_statement}
  }]
}' "$dataset"
