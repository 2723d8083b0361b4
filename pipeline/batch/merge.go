package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/internal/copytree"
)

// MergeReport says what Merge found.
type MergeReport struct {
	Manifest   *Manifest
	Results    []RepoResult // one per repository, manifest order
	Missing    []string     // manifest ids with no result in any dir (a shard is missing)
	Duplicates []Duplicate  // ids with a result in more than one dir
	Unknown    []string     // ids with results but not in the manifest (ignored)
}

// Duplicate is a repository reported by more than one shard dir.
type Duplicate struct {
	ID   string
	Dirs []string // every dir that had it
	Kept string   // the dir whose result was kept
}

// Problems lists the report's findings as human-readable lines.
func (r *MergeReport) Problems() []string {
	var out []string
	if len(r.Missing) > 0 {
		out = append(out, fmt.Sprintf("%s of the manifest %s no result: %s", Repositories(len(r.Missing)), verbHave(len(r.Missing)), strings.Join(r.Missing, ", ")))
	}
	for _, d := range r.Duplicates {
		out = append(out, fmt.Sprintf("duplicate result for %s in %s (kept %s)", d.ID, strings.Join(d.Dirs, ", "), d.Kept))
	}
	if len(r.Unknown) > 0 {
		out = append(out, fmt.Sprintf("results for repositories not in the manifest (ignored): %s", strings.Join(r.Unknown, ", ")))
	}
	return out
}

type sourced struct {
	r   RepoResult
	dir string
}

// Merge fans shard out dirs into out: it checks they share one manifest
// (else ErrManifestMismatch), keeps each repository's latest result
// (preferring a final status, then the later finish), copies the
// repositories' dirs (patches, events), and writes manifest.json,
// results.jsonl (manifest order) and summary.md. Missing repositories make
// the error ErrIncomplete, after everything was written; duplicates are
// only reported.
func Merge(ctx context.Context, dirs []string, out string) (*MergeReport, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("batch merge: no shard dirs given")
	}
	if err := checkNotInput(dirs, out); err != nil {
		return nil, err
	}
	m, err := commonManifest(dirs)
	if err != nil {
		return nil, err
	}
	rep := &MergeReport{Manifest: m}
	chosen, err := collect(dirs, m, rep)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("create merge out dir: %w", err)
	}
	if err := removeStale(out, chosen); err != nil {
		return nil, err
	}
	for _, repo := range m.Repos {
		s, ok := chosen[repo.ID]
		if !ok {
			rep.Missing = append(rep.Missing, repo.ID)
			continue
		}
		rep.Results = append(rep.Results, s.r)
		if err := copyRepoDir(ctx, s.dir, out, repo.ID); err != nil {
			return nil, err
		}
	}
	if err := writeMerged(out, m, rep); err != nil {
		return nil, err
	}
	if len(rep.Missing) > 0 {
		return rep, fmt.Errorf("%w: %d of %s %s no result (a shard missing?)", ErrIncomplete, len(rep.Missing), Repositories(len(m.Repos)), verbHave(len(rep.Missing)))
	}
	return rep, nil
}

// checkNotInput refuses an out dir that is one of the dirs to merge
// (ErrMergeIntoInput): merging would overwrite the inputs as it reads them.
func checkNotInput(dirs []string, out string) error {
	for _, d := range dirs {
		same, err := sameDir(d, out)
		if err != nil {
			return err
		}
		if same {
			return fmt.Errorf("%w: %s (give --out a new directory)", ErrMergeIntoInput, out)
		}
	}
	return nil
}

// removeStale removes, from an out dir that already holds a batch's
// results (an earlier merge), the per-repository dirs this merge will not
// write: the ids of its earlier manifest and results that have no chosen
// result now. Other files and dirs are left alone.
func removeStale(out string, chosen map[string]sourced) error {
	ids := map[string]bool{}
	if old, err := ReadManifest(out); err == nil {
		for _, r := range old.Repos {
			ids[r.ID] = true
		}
	}
	if results, err := ReadResults(out); err == nil {
		for _, r := range results {
			ids[r.ID] = true
		}
	}
	for id := range ids {
		if _, ok := chosen[id]; ok || id == "" || !filepath.IsLocal(id) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(out, id)); err != nil {
			return fmt.Errorf("remove stale %s: %w", filepath.Join(out, id), err)
		}
	}
	return nil
}

func commonManifest(dirs []string) (*Manifest, error) {
	var first *Manifest
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			return nil, fmt.Errorf("shard dir %s: %w", d, err)
		}
		if first == nil {
			first = m
			continue
		}
		if err := sameRepos(first, m); err != nil {
			return nil, fmt.Errorf("%s vs %s: %w: %w", dirs[0], d, ErrManifestMismatch, err)
		}
	}
	return first, nil
}

// collect picks each repository's result across dirs, noting duplicates
// and unknown ids in rep.
func collect(dirs []string, m *Manifest, rep *MergeReport) (map[string]sourced, error) {
	known := map[string]bool{}
	for _, r := range m.Repos {
		known[r.ID] = true
	}
	chosen := map[string]sourced{}
	seenIn := map[string][]string{}
	for _, d := range dirs {
		results, err := ReadResults(d)
		if err != nil {
			return nil, fmt.Errorf("shard dir %s: %w", d, err)
		}
		for id, r := range Latest(results) {
			if !known[id] {
				if !slices.Contains(rep.Unknown, id) {
					rep.Unknown = append(rep.Unknown, id)
				}
				continue
			}
			seenIn[id] = append(seenIn[id], d)
			if cur, ok := chosen[id]; !ok || Better(r, cur.r) {
				chosen[id] = sourced{r: r, dir: d}
			}
		}
	}
	for _, repo := range m.Repos {
		if ds := seenIn[repo.ID]; len(ds) > 1 {
			rep.Duplicates = append(rep.Duplicates, Duplicate{ID: repo.ID, Dirs: ds, Kept: chosen[repo.ID].dir})
		}
	}
	slices.Sort(rep.Unknown)
	return chosen, nil
}

// Better reports whether result a of a repository should replace result b
// when two dirs (shards, reruns) report it: a final status wins over a
// non-final one, then the later finish wins. Merge and the batch report
// pick with it.
func Better(a, b RepoResult) bool {
	if a.Status.Final() != b.Status.Final() {
		return a.Status.Final()
	}
	return a.FinishedAt.After(b.FinishedAt)
}

func copyRepoDir(ctx context.Context, from, out, id string) error {
	src, dst := filepath.Join(from, id), filepath.Join(out, id)
	if same, err := sameDir(src, dst); err != nil || same {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil // skipped repositories have no dir
	}
	if err := copytree.Copy(ctx, src, dst, copytree.Options{}); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}

// sameDir reports whether a and b name the same directory (following
// symlinks when they exist).
func sameDir(a, b string) (bool, error) {
	aa, err := resolvedPath(a)
	if err != nil {
		return false, err
	}
	bb, err := resolvedPath(b)
	if err != nil {
		return false, err
	}
	return aa == bb, nil
}

func resolvedPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", p, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// writeMerged writes manifest.json, results.jsonl and summary.md into out.
func writeMerged(out string, m *Manifest, rep *MergeReport) error {
	if err := writeJSONAtomic(filepath.Join(out, ManifestFile), m); err != nil {
		return fmt.Errorf("write merged manifest: %w", err)
	}
	path := filepath.Join(out, ResultsFile)
	tmp := path + ".merge"
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("clear %s: %w", tmp, err)
	}
	log, err := openResultsLogAt(out, tmp)
	if err != nil {
		return err
	}
	for _, r := range rep.Results {
		if err := log.Append(r); err != nil {
			log.Close()
			return err
		}
	}
	if err := log.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write merged results: %w", err)
	}
	return WriteSummary(filepath.Join(out, SummaryFile), m.Name, rep.Results, rep.Missing)
}
