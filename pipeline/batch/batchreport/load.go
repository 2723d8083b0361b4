package batchreport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// ErrNotBatchDir is returned by Load for a dir that holds neither
// manifest.json nor results.jsonl.
var ErrNotBatchDir = errors.New("not a batch out dir")

// Options tune Load.
type Options struct {
	// LinkBase is the directory the report file will be in: links are
	// relative to it. "" is the current directory.
	LinkBase string
}

// outDir is one out dir as read: its manifest (nil when it has none), each
// repository's latest result and, when every result comes from the same
// shard, that shard.
type outDir struct {
	path     string
	manifest *batch.Manifest
	latest   map[string]batch.RepoResult
	order    []string // ids in the order of their first result
	shardI   int
	shardN   int // 0: not one shard (merged, unsharded, or no results)
}

// Load reads the out dirs of `runner batch run` or `runner batch merge`
// into a Report. Consecutive dirs that are different shards of one batch
// (every result of each from one shard "I/N", same manifest, same N,
// distinct I) are one night, as `batch merge` would merge them; every
// other dir is a night of its own. Nights are ordered by their latest
// finish; the latest is reported in full, all of them in Report.Nights.
//
// A dir with neither manifest.json nor results.jsonl is ErrNotBatchDir; a
// malformed results line is an error naming its file and line. Missing
// per-repository files only leave their numbers and links out; an
// unreadable one is listed in Report.Problems.
func Load(ctx context.Context, dirs []string, opts Options) (*Report, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("batch report: no out dirs given")
	}
	var ds []*outDir
	for _, d := range dirs {
		od, err := readOutDir(d)
		if err != nil {
			return nil, err
		}
		ds = append(ds, od)
	}
	l := &loader{opts: opts}
	var nights []*night
	for _, g := range groupNights(ds) {
		n, err := l.night(ctx, g)
		if err != nil {
			return nil, err
		}
		nights = append(nights, n)
	}
	slices.SortStableFunc(nights, func(a, b *night) int { return a.FinishedAt.Compare(b.FinishedAt) })
	return l.report(nights), nil
}

func readOutDir(dir string) (*outDir, error) {
	od := &outDir{path: dir}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: %w: no such directory (give the --out dir of `runner batch run` or `runner batch merge`)", dir, ErrNotBatchDir)
	}
	m, err := batch.ReadManifest(dir)
	switch {
	case err == nil:
		od.manifest = m
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, batch.ResultsFile)); errors.Is(err, fs.ErrNotExist) && od.manifest == nil {
		return nil, fmt.Errorf("%s: %w: it has no %s or %s (give the --out dir of `runner batch run` or `runner batch merge`)",
			dir, ErrNotBatchDir, batch.ManifestFile, batch.ResultsFile)
	}
	results, err := batch.ReadResults(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	od.latest = batch.Latest(results)
	shards := map[string]bool{}
	seen := make(map[string]bool, len(od.latest))
	for _, r := range results {
		if !seen[r.ID] {
			seen[r.ID] = true
			od.order = append(od.order, r.ID)
		}
		shards[r.Shard] = true
	}
	if len(shards) == 1 {
		for s := range shards {
			od.shardI, od.shardN = parseShard(s)
		}
	}
	return od, nil
}

// parseShard parses "I/N"; n is 0 for anything else or N < 2.
func parseShard(s string) (i, n int) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n < 2 || i < 0 || i >= n {
		return 0, 0
	}
	return i, n
}

// groupNights puts consecutive shard dirs of one batch together.
func groupNights(ds []*outDir) [][]*outDir {
	var groups [][]*outDir
	for _, d := range ds {
		if k := len(groups); k > 0 && joins(groups[k-1], d) {
			groups[k-1] = append(groups[k-1], d)
			continue
		}
		groups = append(groups, []*outDir{d})
	}
	return groups
}

// joins reports whether d is another shard of the night g.
func joins(g []*outDir, d *outDir) bool {
	if d.shardN == 0 {
		return false
	}
	for _, o := range g {
		if o.shardN != d.shardN || o.shardI == d.shardI || !sameRepos(o.manifest, d.manifest) {
			return false
		}
	}
	return true
}

func sameRepos(a, b *batch.Manifest) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && slices.EqualFunc(a.Repos, b.Repos, func(x, y batch.Repo) bool { return x.ID == y.ID })
}
