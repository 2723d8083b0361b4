package batchreport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// night is one night while it is built.
type night struct {
	Night
	name     string
	repos    []Repo
	problems []string
}

type loader struct {
	opts Options
}

type picked struct {
	r   batch.RepoResult
	dir *outDir
}

// night builds one night from its dirs: each repository's best result
// across them (batch.Better), in manifest order, the manifest's
// repositories without a result as StatusMissing.
func (l *loader) night(ctx context.Context, g []*outDir) (*night, error) {
	n := &night{}
	var m *batch.Manifest
	for _, d := range g {
		n.Dirs = append(n.Dirs, d.path)
		if m == nil {
			m = d.manifest
		}
	}
	n.Label = strings.Join(n.Dirs, ", ")
	chosen := l.choose(g, n)
	var order []string
	sources := map[string]string{}
	if m != nil {
		n.name = m.Name
		for _, r := range m.Repos {
			order = append(order, r.ID)
			sources[r.ID] = r.Source()
		}
		n.unknown(chosen, sources)
	} else {
		seen := map[string]bool{}
		for _, d := range g {
			for _, id := range d.order {
				if !seen[id] {
					seen[id] = true
					order = append(order, id)
				}
			}
		}
	}
	if err := l.readRepos(ctx, n, order, chosen, sources); err != nil {
		return nil, err
	}
	n.Totals, n.Statuses = totals(n.repos)
	return n, nil
}

// choose picks each repository's result across the night's dirs and notes
// repositories reported by several.
func (l *loader) choose(g []*outDir, n *night) map[string]picked {
	chosen := map[string]picked{}
	for _, d := range g {
		for _, id := range d.order {
			r := d.latest[id]
			cur, ok := chosen[id]
			if ok {
				n.problems = append(n.problems, fmt.Sprintf("%s has results in %s and %s", id, cur.dir.path, d.path))
			}
			if !ok || batch.Better(r, cur.r) {
				chosen[id] = picked{r: r, dir: d}
			}
		}
	}
	return chosen
}

// unknown drops results of repositories the manifest does not list, as
// `batch merge` does, and says so.
func (n *night) unknown(chosen map[string]picked, known map[string]string) {
	var ids []string
	for id := range chosen {
		if _, ok := known[id]; !ok {
			ids = append(ids, id)
			delete(chosen, id)
		}
	}
	if len(ids) > 0 {
		slices.Sort(ids)
		n.problems = append(n.problems, "results for repositories not in the manifest (left out): "+strings.Join(ids, ", "))
	}
}

// readRepos fills n.repos in order: each chosen result read with its dir
// (several at once: a night of 10,000 repositories is 40,000 files), the
// others as StatusMissing.
func (l *loader) readRepos(ctx context.Context, n *night, order []string, chosen map[string]picked, sources map[string]string) error {
	n.repos = make([]Repo, len(order))
	problems := make([][]string, len(order))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(2, 2*runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				n.repos[i], problems[i] = l.repo(chosen[order[i]])
			}
		}()
	}
	var err error
	for i, id := range order {
		if err = ctx.Err(); err != nil {
			break
		}
		p, ok := chosen[id]
		if !ok {
			n.repos[i] = Repo{ID: id, Repo: sources[id], Status: StatusMissing}
			continue
		}
		if p.r.FinishedAt.After(n.FinishedAt) {
			n.FinishedAt = p.r.FinishedAt
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("batch report: %w", err)
	}
	for _, ps := range problems {
		n.problems = append(n.problems, ps...)
	}
	return nil
}

// repo turns a result into a Repo, reading its dir: tokens from
// result.json, the diffstat from the patch, and which links exist; it
// returns what it had to leave out. Safe for concurrent use.
func (l *loader) repo(p picked) (Repo, []string) {
	var problems []string
	r := p.r
	out := Repo{
		ID: r.ID, Repo: r.Repo, Status: r.Status, CostUSD: r.CostUSD, Steps: r.Steps, DurationMS: r.DurationMS,
		FilesChanged: r.FilesChanged, Error: r.Error, ErrorClass: r.ErrorClass, Attempts: r.Attempts,
		Commit: r.Commit, Shard: r.Shard, PRURL: r.PRURL, PublishError: r.PublishError, Dir: p.dir.path,
	}
	if !filepath.IsLocal(filepath.FromSlash(r.ID)) {
		problems = append(problems, fmt.Sprintf("%s: the id is not a local path; its files are left out", r.ID))
		return out, problems
	}
	repoDir := filepath.Join(p.dir.path, filepath.FromSlash(r.ID))
	if tok, ok, err := readTokens(filepath.Join(repoDir, outdir.ResultFile)); err != nil {
		problems = append(problems, err.Error())
	} else if ok {
		out.Tokens = tok
	}
	if r.PatchPath != "" && !filepath.IsLocal(filepath.FromSlash(r.PatchPath)) {
		problems = append(problems, fmt.Sprintf("%s: patch_path %q is not inside the out dir; it is left out", r.ID, r.PatchPath))
	} else if r.PatchPath != "" {
		patch := filepath.Join(p.dir.path, filepath.FromSlash(r.PatchPath))
		st, err := CountDiffFile(patch)
		switch {
		case err == nil:
			out.Additions, out.Deletions = st.Additions, st.Deletions
			out.Links.Patch = l.link(patch)
		case !errors.Is(err, fs.ErrNotExist):
			problems = append(problems, fmt.Sprintf("%s: %v", patch, err))
		}
	}
	out.Links.Summary = l.linkIfExists(filepath.Join(repoDir, outdir.SummaryFile))
	out.Links.Events = l.linkIfExists(filepath.Join(repoDir, outdir.EventsFile))
	return out, problems
}

// readTokens reads the token totals of a run.finished record; ok is false
// when the file does not exist.
func readTokens(path string) (event.Tokens, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return event.Tokens{}, false, nil
	}
	if err != nil {
		return event.Tokens{}, false, fmt.Errorf("%s: %w", path, err)
	}
	var fin struct {
		Tokens event.Tokens `json:"tokens"`
	}
	if err := json.Unmarshal(data, &fin); err != nil {
		return event.Tokens{}, false, fmt.Errorf("%s: %w (its tokens are left out)", path, err)
	}
	return fin.Tokens, true, nil
}

func (l *loader) linkIfExists(path string) string {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return l.link(path)
}

// link is path relative to the report's dir, as a URL path; "" when it
// cannot be made relative.
func (l *loader) link(path string) string {
	base, err := filepath.Abs(l.opts.LinkBase)
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// totals sums repos and counts their statuses.
func totals(repos []Repo) (Totals, []StatusCount) {
	t := Totals{Repositories: len(repos), CostUSD: new(float64)}
	counts := map[batch.Status]int{}
	for _, r := range repos {
		counts[r.Status]++
		if Succeeded(r.Status) {
			t.Succeeded++
		}
		t.CostUSD = batch.AddCost(t.CostUSD, r.CostUSD)
		if r.CostUSD == nil { // a model without a price; a missing result
			t.CostUnknown++
		}
		t.Tokens = t.Tokens.Add(r.Tokens)
		t.DurationMS += r.DurationMS
		t.Steps += r.Steps
		t.FilesChanged += r.FilesChanged
		t.Additions += r.Additions
		t.Deletions += r.Deletions
		if r.PRURL != "" {
			t.PullRequests++
		}
	}
	if t.Repositories > 0 {
		t.SuccessRate = float64(t.Succeeded) / float64(t.Repositories)
	}
	var sc []StatusCount
	for _, s := range append(batch.AllStatuses(), StatusMissing) {
		if counts[s] > 0 {
			sc = append(sc, StatusCount{Status: s, Count: counts[s]})
			delete(counts, s)
		}
	}
	for _, s := range slices.Sorted(mapKeys(counts)) { // a status of a newer runner
		sc = append(sc, StatusCount{Status: s, Count: counts[s]})
	}
	return t, sc
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// report assembles the Report of the latest night.
func (l *loader) report(nights []*night) *Report {
	last := nights[len(nights)-1]
	rep := &Report{
		Version: Version, Name: last.name, Dirs: last.Dirs, FinishedAt: last.FinishedAt,
		Totals: last.Totals, Statuses: last.Statuses, Repos: last.repos, Problems: last.problems,
		Errors: errorGroups(last.repos),
	}
	for _, n := range nights {
		rep.Nights = append(rep.Nights, n.Night)
	}
	if p := mixedBatches(nights); p != "" {
		rep.Problems = append(slices.Clone(rep.Problems), p)
	}
	if rep.Repos == nil {
		rep.Repos = []Repo{}
	}
	return rep
}

// errorGroups groups the repositories that did not succeed by class.
func errorGroups(repos []Repo) []ErrorGroup {
	idx := map[string]int{}
	var groups []ErrorGroup
	add := func(class string, r Repo, msg string) {
		i, ok := idx[class]
		if !ok {
			i = len(groups)
			idx[class] = i
			groups = append(groups, ErrorGroup{Class: class})
		}
		g := &groups[i]
		g.Count++
		g.Repos = append(g.Repos, r.ID)
		if g.Example == "" {
			g.Example = oneLine(msg, 300)
		}
		if j := slices.IndexFunc(g.Statuses, func(s StatusCount) bool { return s.Status == r.Status }); j >= 0 {
			g.Statuses[j].Count++
		} else {
			g.Statuses = append(g.Statuses, StatusCount{Status: r.Status, Count: 1})
		}
	}
	for _, r := range repos {
		if !Succeeded(r.Status) {
			class := string(r.ErrorClass)
			if class == "" {
				class = string(r.Status)
			}
			add(class, r, r.Error)
		}
		if r.PublishError != "" {
			add("publish", r, r.PublishError)
		}
	}
	slices.SortStableFunc(groups, func(a, b ErrorGroup) int { return b.Count - a.Count })
	if groups == nil {
		groups = []ErrorGroup{}
	}
	return groups
}

// oneLine collapses whitespace and truncates s to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// durationText is a duration in milliseconds, rounded for reading: "850ms",
// "12s", "3m05s", "2h03m".
func durationText(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.0fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// mixedBatches says that the nights are of different batches (their
// manifests' names differ): the trend then compares unlike things, and
// the report is headed by the latest. "" when they are one batch's (a
// night without a manifest has no name and is taken as the others').
func mixedBatches(nights []*night) string {
	var names []string
	dirs := map[string][]string{}
	for _, n := range nights {
		if n.name == "" {
			continue
		}
		if _, ok := dirs[n.name]; !ok {
			names = append(names, n.name)
		}
		dirs[n.name] = append(dirs[n.name], n.Dirs...)
	}
	if len(names) < 2 {
		return ""
	}
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s (%s)", name, strings.Join(dirs[name], ", "))
	}
	return fmt.Sprintf("the out dirs hold %d different batches: %s; the trend compares them as nights of one, "+
		"and the report is headed by the latest, %s: give the out dirs of one batch", len(names), strings.Join(parts, ", "), nights[len(nights)-1].name)
}
