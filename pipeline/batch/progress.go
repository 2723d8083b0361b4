package batch

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress prints one line per finished repository and, on a terminal, a
// live overall bar below them. Safe for concurrent use.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	done  int
	p     *mpb.Progress // nil without a TTY
	bar   *mpb.Bar
}

func newProgress(w io.Writer, tty bool, total int) *progress {
	if w == nil {
		w = io.Discard
	}
	pr := &progress{w: w, total: total}
	if tty && total > 0 {
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithAutoRefresh(), mpb.WithRefreshRate(150*time.Millisecond))
		pr.bar = pr.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name("batch "), decor.CountersNoUnit("%d/%d")),
			mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Name(" "), decor.Elapsed(decor.ET_STYLE_GO)),
		)
		pr.w = pr.p // lines go above the bar
	}
	return pr
}

// finished prints r's line and advances the bar.
func (p *progress) finished(r RepoResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	fmt.Fprintln(p.w, formatLine(p.done, p.total, r))
	if p.bar != nil {
		p.bar.Increment()
	}
}

// formatLine is "[ 3/20] id  status  $0.1200  5 steps  3 files  1.2s  error"
// ("cost unknown" for an unknown cost).
func formatLine(done, total int, r RepoResult) string {
	width := len(fmt.Sprint(total))
	cost := FormatCost(r.CostUSD, "$")
	if r.CostUSD == nil {
		cost = "cost unknown"
	}
	s := fmt.Sprintf("[%*d/%d] %s  %s  %s  %s  %s  %s",
		width, done, total, r.ID, r.Status, cost, plural(r.Steps, "step", "steps"), plural(r.FilesChanged, "file", "files"),
		(time.Duration(r.DurationMS) * time.Millisecond).Round(time.Millisecond))
	if r.Error != "" {
		s += "  " + oneLine(r.Error, 160)
	}
	return s
}

func (p *progress) close() {
	if p.p == nil {
		return
	}
	p.mu.Lock()
	if !p.bar.Completed() {
		p.bar.Abort(false)
	}
	p.mu.Unlock()
	p.p.Wait()
}
