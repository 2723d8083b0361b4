package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"
)

// Publisher opens one pull request from a stored patch: it pushes a branch
// with the patch applied to the result's base commit and opens the PR
// (the github package implements it). Publish calls it serially, from one
// goroutine, paced. An error is recorded on the result and publishing goes
// on with the next repository; a *RetryAfterError (a 429, a 403 secondary
// rate limit) makes Publish wait and call again for the same repository.
type Publisher interface {
	Publish(ctx context.Context, r RepoResult, patchPath string) (prURL string, err error)
}

// RetryAfterError asks Publish to wait After before trying the same write
// again (from a Retry-After header or a secondary rate limit).
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("rate limited, retry after %s: %v", e.After, e.Err)
}

// Unwrap returns the underlying error.
func (e *RetryAfterError) Unwrap() error { return e.Err }

// Clock is the time source of Publish, replaced by a fake in tests.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done (then it returns ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Defaults of PublishOptions.
const (
	DefaultMinInterval     = time.Second
	DefaultPublishAttempts = 5
)

// PublishOptions configure Publish.
type PublishOptions struct {
	Publisher Publisher
	// MinInterval is the least time between two writes (GitHub asks for
	// at least a second between content-creating requests). 0 = DefaultMinInterval.
	MinInterval time.Duration
	// MaxPerHour caps pull requests opened in any rolling hour, counting
	// those recorded by earlier runs; 0 = no cap.
	MaxPerHour int
	// StopAtHourlyCap returns ErrHourlyCap at the cap instead of waiting
	// for the hour to roll (a later run resumes).
	StopAtHourlyCap bool
	// Attempts bounds the calls per repository when the publisher keeps
	// asking to retry after a delay. 0 = DefaultPublishAttempts.
	Attempts int
	Clock    Clock     // nil = the real clock
	Progress io.Writer // one line per repository; nil = none
	// Failures gets the line of a repository whose publishing failed
	// (nil: Progress), so that it still shows with --quiet.
	Failures io.Writer
}

// Publish opens a pull request for every repository of dir (a run or
// merge out dir) whose latest result is success with a patch and no
// pr_url yet, in manifest order, serially, at most one write per
// MinInterval and MaxPerHour per rolling hour. Each outcome is appended to
// results.jsonl (pr_url and published_at, or publish_error), so re-running
// resumes where it stopped. Failures of single repositories are collected
// into one error matching ErrPublish.
func Publish(ctx context.Context, dir string, opts PublishOptions) error {
	if opts.Publisher == nil {
		return ErrNoPublisher
	}
	p, todo, err := newPublishRun(dir, opts)
	if err != nil {
		return err
	}
	defer p.log.Close()
	failed := 0
	for i, r := range todo {
		if err := p.one(ctx, i, len(todo), r); err != nil {
			var rec *recordedError
			if !errors.As(err, &rec) {
				return err
			}
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d pull requests", ErrPublish, failed, len(todo))
	}
	return nil
}

// recordedError is a publish failure already recorded on the result.
type recordedError struct{ err error }

func (e *recordedError) Error() string { return e.err.Error() }
func (e *recordedError) Unwrap() error { return e.err }

type publishRun struct {
	opts   PublishOptions
	dir    string
	log    *resultsLog
	last   time.Time   // the last write
	window []time.Time // PRs opened in the last hour, oldest first
}

func newPublishRun(dir string, opts PublishOptions) (*publishRun, []RepoResult, error) {
	if opts.MinInterval <= 0 {
		opts.MinInterval = DefaultMinInterval
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultPublishAttempts
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Failures == nil {
		opts.Failures = opts.Progress
	}
	results, err := ReadResults(dir)
	if err != nil {
		return nil, nil, err
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	latest := Latest(results)
	p := &publishRun{opts: opts, dir: dir}
	var todo []RepoResult
	for _, repo := range m.Repos {
		r, ok := latest[repo.ID]
		if !ok {
			continue
		}
		if r.PublishedAt != nil {
			p.window = append(p.window, *r.PublishedAt)
		}
		if r.Status == StatusSuccess && r.PatchPath != "" && r.PRURL == "" {
			todo = append(todo, r)
		}
	}
	slices.SortFunc(p.window, func(a, b time.Time) int { return a.Compare(b) })
	if n := len(p.window); n > 0 {
		p.last = p.window[n-1]
	}
	if p.log, err = openResultsLog(dir); err != nil {
		return nil, nil, err
	}
	return p, todo, nil
}

// one publishes r: wait for the pace, call, retry after delays, record.
func (p *publishRun) one(ctx context.Context, i, n int, r RepoResult) error {
	patch := r.PatchPath
	if !filepath.IsAbs(patch) {
		patch = filepath.Join(p.dir, patch)
	}
	var url string
	var err error
	for attempt := 1; ; attempt++ {
		if err := p.pace(ctx); err != nil {
			return err
		}
		url, err = p.opts.Publisher.Publish(ctx, r, patch)
		p.last = p.opts.Clock.Now()
		var ra *RetryAfterError
		if err == nil || !errors.As(err, &ra) || attempt >= p.opts.Attempts || ctx.Err() != nil {
			break
		}
		fmt.Fprintf(p.opts.Progress, "[%d/%d] %s  rate limited, waiting %s\n", i+1, n, r.ID, ra.After)
		if err := p.opts.Clock.Sleep(ctx, ra.After); err != nil {
			return fmt.Errorf("publish %s: %w", r.ID, err)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("publish %s: %w", r.ID, context.Cause(ctx))
	}
	if err != nil {
		r.PublishError = err.Error()
		fmt.Fprintf(p.opts.Failures, "[%d/%d] %s  publish failed: %s\n", i+1, n, r.ID, oneLine(err.Error(), 160))
		if lerr := p.log.Append(r); lerr != nil {
			return lerr
		}
		return &recordedError{err: fmt.Errorf("publish %s: %w", r.ID, err)}
	}
	now := p.opts.Clock.Now().UTC()
	r.PRURL, r.PublishedAt, r.PublishError = url, &now, ""
	p.window = append(p.window, now)
	fmt.Fprintf(p.opts.Progress, "[%d/%d] %s  %s\n", i+1, n, r.ID, url)
	return p.log.Append(r)
}

// pace waits until a write is allowed: MinInterval after the last one and
// under MaxPerHour in the rolling hour.
func (p *publishRun) pace(ctx context.Context) error {
	c := p.opts.Clock
	if p.opts.MaxPerHour > 0 {
		for {
			now := c.Now()
			for len(p.window) > 0 && now.Sub(p.window[0]) >= time.Hour {
				p.window = p.window[1:]
			}
			if len(p.window) < p.opts.MaxPerHour {
				break
			}
			if p.opts.StopAtHourlyCap {
				return fmt.Errorf("%w (%d per hour)", ErrHourlyCap, p.opts.MaxPerHour)
			}
			if err := c.Sleep(ctx, p.window[0].Add(time.Hour).Sub(now)); err != nil {
				return fmt.Errorf("wait for the hourly cap: %w", err)
			}
		}
	}
	if p.last.IsZero() {
		return nil
	}
	if wait := p.last.Add(p.opts.MinInterval).Sub(c.Now()); wait > 0 {
		if err := c.Sleep(ctx, wait); err != nil {
			return fmt.Errorf("wait between writes: %w", err)
		}
	}
	return nil
}
