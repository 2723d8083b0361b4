// Package swebench writes a batch's patches as a SWE-bench predictions file
// (`runner batch export DIR --format swebench`): one JSON object per line,
// the format the SWE-bench evaluation harness reads with
// `python -m swebench.harness.run_evaluation --predictions_path FILE.jsonl`.
//
// The fields and their types follow the harness's source
// (github.com/SWE-bench/SWE-bench, commit 7a21e05):
// swebench/harness/utils.py get_predictions_from_file reads a ".jsonl" file
// as one json.loads per line and requires "instance_id" in each;
// swebench/harness/run_evaluation.py uses pred["model_name_or_path"] (a
// string: it calls .replace("/", "__") on it for the log dir) and writes
// pred["model_patch"] (a string, or null for none) to patch.diff, applied
// with `git apply --verbose` at the instance's base commit; a prediction
// whose model_patch is "" or null is not evaluated.
//
// Imports: pipeline/batch.
package swebench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// InstanceIDInput is the per-repository task input that, when the batch
// spec sets it, names the SWE-bench instance (e.g. "sympy__sympy-20590");
// without it the repository's id is the instance_id.
const InstanceIDInput = "instance_id"

// Prediction is one line of a SWE-bench predictions file.
type Prediction struct {
	InstanceID      string `json:"instance_id"`
	ModelNameOrPath string `json:"model_name_or_path"`
	ModelPatch      string `json:"model_patch"` // the patch file's bytes, exactly
}

// Skipped is a repository with a patch that could not be exported.
type Skipped struct {
	ID     string
	Reason string
}

// Result says what Export wrote.
type Result struct {
	Written int       // predictions written
	Skipped []Skipped // repositories with a patch left out, and why
}

// ErrDuplicateInstance is returned when two repositories map to one
// instance_id: the harness keys predictions by it, so one would be lost.
var ErrDuplicateInstance = errors.New("two repositories have the same instance_id")

// Export writes one Prediction per repository of the batch out dir whose
// latest result has a non-empty patch, whatever its status (the harness
// grades the patch), in manifest order (results order without a
// manifest). The patch is carried byte for byte; a patch that is not
// valid UTF-8 cannot be (JSON strings are Unicode text) and is skipped
// with its reason. modelName must not be empty. Nothing is written when an
// error is returned.
func Export(dir, modelName string, w io.Writer) (Result, error) {
	if modelName == "" {
		return Result{}, fmt.Errorf("swebench export: the model name is empty (give --model-name, e.g. the model the batch ran)")
	}
	results, err := batch.ReadResults(dir)
	if err != nil {
		return Result{}, fmt.Errorf("swebench export: %s: %w", dir, err)
	}
	latest := batch.Latest(results)
	order, inputs, err := repoOrder(dir, results)
	if err != nil {
		return Result{}, err
	}
	var res Result
	var preds []Prediction
	seen := map[string]string{}
	for _, id := range order {
		r, ok := latest[id]
		if !ok || r.PatchPath == "" {
			continue
		}
		patch, skip, err := readPatch(dir, r)
		if err != nil {
			return Result{}, err
		}
		if skip != "" {
			res.Skipped = append(res.Skipped, Skipped{ID: id, Reason: skip})
			continue
		}
		if patch == nil {
			continue
		}
		inst := id
		if v := inputs[id][InstanceIDInput]; v != "" {
			inst = v
		}
		if other, dup := seen[inst]; dup {
			return Result{}, fmt.Errorf("swebench export: %w: %s and %s are both %q (give each repository its own %s input)",
				ErrDuplicateInstance, other, id, inst, InstanceIDInput)
		}
		seen[inst] = id
		preds = append(preds, Prediction{InstanceID: inst, ModelNameOrPath: modelName, ModelPatch: string(patch)})
	}
	enc := json.NewEncoder(w) // one object per line, no blank lines
	enc.SetEscapeHTML(false)
	for _, p := range preds {
		if err := enc.Encode(p); err != nil {
			return res, fmt.Errorf("swebench export: write: %w", err)
		}
		res.Written++
	}
	return res, nil
}

// repoOrder lists the ids in manifest order with their inputs; without a
// manifest, in the order of their first result.
func repoOrder(dir string, results []batch.RepoResult) ([]string, map[string]map[string]string, error) {
	m, err := batch.ReadManifest(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("swebench export: %s: %w", dir, err)
	}
	inputs := map[string]map[string]string{}
	var order []string
	if m != nil {
		for _, r := range m.Repos {
			order = append(order, r.ID)
			inputs[r.ID] = r.Inputs
		}
		return order, inputs, nil
	}
	if len(results) == 0 {
		return nil, nil, fmt.Errorf("swebench export: %s: not a batch out dir: it has no %s or %s", dir, batch.ManifestFile, batch.ResultsFile)
	}
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.ID] {
			seen[r.ID] = true
			order = append(order, r.ID)
		}
	}
	return order, inputs, nil
}

// readPatch reads the result's patch: nil for an empty one; skip says why
// a patch cannot be exported.
func readPatch(dir string, r batch.RepoResult) (patch []byte, skip string, err error) {
	rel := filepath.FromSlash(r.PatchPath)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Sprintf("patch_path %q is not inside the out dir", r.PatchPath), nil
	}
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("its patch %s is missing from the out dir", r.PatchPath), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("swebench export: %w", err)
	}
	if len(data) == 0 {
		return nil, "", nil
	}
	if !utf8.Valid(data) {
		return nil, fmt.Sprintf("its patch %s is not valid UTF-8, which a JSON string cannot carry exactly", r.PatchPath), nil
	}
	return data, "", nil
}
