package batchreport

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// TestHTMLInChromium loads the report of a generated 300-repository batch
// and of a 6-repository one (two nights, the latest as unmerged shards) in
// headless Chromium: the charts are drawn (with and without JavaScript),
// the page requests nothing but itself, and the table filters and sorts.
func TestHTMLInChromium(t *testing.T) {
	b := newBrowser(t)
	t.Run("control", func(t *testing.T) { checkDetectorSeesRequests(t, b) })
	cases := []struct {
		name  string
		write func(t *testing.T, dir string) []string
		query string // a filter that matches one repository
	}{
		{"300-repos", func(t *testing.T, dir string) []string {
			t.Helper()
			return genBatch{Name: "nightly", Repos: 300, Seed: 7, Reruns: true}.write(t, filepath.Join(dir, "out"))
		}, "svc-0123"},
		{"6-repos", func(t *testing.T, dir string) []string {
			t.Helper()
			n1 := genBatch{Name: "nightly", Repos: 6, Seed: 1, Start: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)}.write(t, filepath.Join(dir, "n1"))
			n2 := genBatch{Name: "nightly", Repos: 6, Seed: 2, Shards: 2, Drop: []int{4}}.write(t, filepath.Join(dir, "n2"))
			return append(n1, n2...)
		}, "svc-0003"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dirs := c.write(t, dir)
			out := filepath.Join(dir, "report.html")
			rep, err := Load(t.Context(), dirs, Options{LinkBase: dir})
			if err != nil {
				t.Fatal(err)
			}
			html, err := HTML(rep)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, html, 0o644); err != nil {
				t.Fatal(err)
			}
			checkPage(t, b, rep, out, c.name, c.query)
		})
	}
}

func checkPage(t *testing.T, b *browser, rep *Report, path, name, query string) {
	t.Helper()
	before := len(b.requests())
	b.scripts(t, true)
	if err := chromedp.Do(b.ctx, chromedp.Navigate(fileURL(path)), chromedp.WaitVisible(chromedp.ID("controls"))); err != nil {
		t.Fatal(err)
	}
	ids := []string{"chart-status", "chart-cost", "chart-duration", "chart-diff"}
	if len(rep.Nights) > 1 {
		ids = append(ids, "chart-trend")
	}
	rects := b.chartRects(t, ids)
	img := b.screenshot(t, name+".png", bottom(rects))
	checkCharts(t, img, rects, ids)
	checkFilter(t, b, rep, query)
	checkSort(t, b, rep)
	checkLinks(t, b, path)

	// Without JavaScript the charts are still there (drawn in Go) and the
	// filter controls, which need it, stay hidden.
	b.scripts(t, false)
	if err := chromedp.Do(b.ctx, chromedp.Navigate(fileURL(path)), chromedp.WaitReady(chromedp.ID("repos"))); err != nil {
		t.Fatal(err)
	}
	hidden, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.getElementById('controls').hidden`))
	if err != nil {
		t.Fatal(err)
	}
	if !hidden {
		t.Error("with JavaScript off, the filter controls show")
	}
	rects = b.chartRects(t, ids)
	img = b.screenshot(t, name+"-nojs.png", bottom(rects))
	checkCharts(t, img, rects, ids)
	b.scripts(t, true)

	want := fileURL(path)
	for _, u := range b.requests()[before:] {
		if u != want {
			t.Errorf("the page requested %s", u)
		}
	}
	if got := b.proxy.requests(); len(got) > 0 {
		t.Errorf("requests reached the network (the proxy): %q", got)
	}
}

// checkDetectorSeesRequests: a page that loads an image from the network
// is caught both by the DevTools events and by the proxy, so the checks
// above can fail.
func checkDetectorSeesRequests(t *testing.T, b *browser) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "fetches.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><img src="http://report-test.invalid/pixel.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := len(b.requests())
	if err := chromedp.Do(b.ctx, chromedp.Navigate(fileURL(page))); err != nil {
		t.Fatal(err)
	}
	// The events and the proxy's lines come in asynchronously: wait for
	// them (a deadline for a loaded machine, not a timing assertion; a
	// fixed 300 ms wait let the control fail).
	seen := func() bool { return slices.Contains(b.requests()[before:], "http://report-test.invalid/pixel.png") }
	for deadline := time.Now().Add(30 * time.Second); !seen() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if !seen() {
		t.Errorf("the DevTools events missed the image request: %q", b.requests()[before:])
	}
	for deadline := time.Now().Add(30 * time.Second); len(b.proxy.requests()) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	got := b.proxy.requests()
	if len(got) == 0 || !strings.Contains(got[0], "report-test.invalid") {
		t.Fatalf("the proxy saw %q, want the image request", got)
	}
	b.proxy.mu.Lock()
	b.proxy.lines = nil
	b.proxy.mu.Unlock()
}

// visible counts the table's visible rows and reads the "shown" counter.
func visible(t *testing.T, b *browser, js string) (int, string) {
	t.Helper()
	type counts struct {
		N     int
		Shown string
	}
	script := `(function(){` + js + `;return {N:[].filter.call(document.querySelectorAll('#repos tbody tr'),function(r){return !r.hidden}).length,` +
		`Shown:document.getElementById('shown').textContent}})()`
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[counts](script))
	if err != nil {
		t.Fatal(err)
	}
	return out.N, out.Shown
}

func checkFilter(t *testing.T, b *browser, rep *Report, query string) {
	t.Helper()
	set := func(q, status string) string {
		return fmt.Sprintf(`var q=document.getElementById('q'),s=document.getElementById('st');q.value=%q;q.dispatchEvent(new Event('input'));`+
			`s.value=%q;s.dispatchEvent(new Event('change'))`, q, status)
	}
	if n, shown := visible(t, b, set(query, "")); n != 1 || shown != "1" {
		t.Errorf("filter %q: %d rows visible (counter %q), want 1", query, n, shown)
	}
	for _, s := range rep.Statuses {
		if n, shown := visible(t, b, set("", string(s.Status))); n != s.Count || shown != fmt.Sprint(s.Count) {
			t.Errorf("status filter %s: %d rows visible (counter %q), want %d", s.Status, n, shown, s.Count)
		}
	}
	failed := 0
	for _, r := range rep.Repos {
		if r.Status == batch.StatusTaskFailed && strings.Contains(strings.ToLower(r.Error), "max steps") {
			failed++
		}
	}
	if n, _ := visible(t, b, set("MAX STEPS", string(batch.StatusTaskFailed))); n != failed {
		t.Errorf("text and status filter together: %d rows, want %d", n, failed)
	}
	if n, _ := visible(t, b, set("", "")); n != len(rep.Repos) {
		t.Errorf("cleared filters: %d rows, want %d", n, len(rep.Repos))
	}
}

// checkSort clicks the cost header: the most expensive repository comes
// first; clicking again puts the cheapest first.
func checkSort(t *testing.T, b *browser, rep *Report) {
	t.Helper()
	first := func() string {
		if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`#repos th:nth-child(3)`))); err != nil {
			t.Fatal(err)
		}
		id, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('#repos tbody tr td').textContent`))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	sorted := slices.Clone(rep.Repos)
	slices.SortStableFunc(sorted, func(a, b Repo) int {
		switch {
		case Cost(a) > Cost(b):
			return -1
		case Cost(a) < Cost(b):
			return 1
		}
		return 0
	})
	if got := first(); got != sorted[0].ID {
		t.Errorf("after sorting by cost, the first row is %s, want %s", got, sorted[0].ID)
	}
	if got, last := first(), sorted[len(sorted)-1]; Cost(rep.Repos[slices.IndexFunc(rep.Repos, func(r Repo) bool { return r.ID == got })]) != Cost(last) {
		t.Errorf("sorting by cost again: the first row is %s, want one costing %.4f", got, Cost(last))
	}
}

// checkLinks: every patch, summary and events link resolves to a file
// next to the report.
func checkLinks(t *testing.T, b *browser, path string) {
	t.Helper()
	hrefs, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[].map.call(document.querySelectorAll('#repos td a'),function(a){return a.getAttribute('href')}).filter(function(h){return h.indexOf('http')!==0})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(hrefs) == 0 {
		t.Fatal("no links in the table")
	}
	for _, h := range hrefs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), filepath.FromSlash(h))); err != nil {
			t.Errorf("link %s: %v", h, err)
		}
	}
}
