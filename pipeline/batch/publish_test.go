package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock advances only when slept on.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// fakePublisher records when each write happened (by the fake clock) and
// answers by repository id.
type fakePublisher struct {
	clock   *fakeClock
	limited map[string]int // id → times to answer RetryAfterError first
	fail    map[string]bool
	calls   []string
	at      []time.Time
}

func (p *fakePublisher) Publish(_ context.Context, r RepoResult, patch string) (string, error) {
	p.calls = append(p.calls, r.ID)
	p.at = append(p.at, p.clock.Now())
	if _, err := os.Stat(patch); err != nil {
		return "", err
	}
	if p.limited[r.ID] > 0 {
		p.limited[r.ID]--
		return "", &RetryAfterError{After: 90 * time.Second, Err: errors.New("secondary rate limit")}
	}
	if p.fail[r.ID] {
		return "", errors.New("422 branch protection")
	}
	return "https://github.com/org/" + r.ID + "/pull/1", nil
}

// publishDir makes an out dir with n results: even ones are successes
// with a patch, odd ones no_change.
func publishDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	m := &Manifest{Version: 1, Name: "p"}
	log, err := openResultsLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		m.Repos = append(m.Repos, Repo{ID: id, Path: id})
		r := RepoResult{Repo: id, ID: id, Status: StatusNoChange}
		if i%2 == 0 {
			r.Status, r.PatchPath, r.FilesChanged = StatusSuccess, id+"/changes.patch", 1
			write(t, filepath.Join(dir, r.PatchPath), "--- a\n+++ b\n")
		}
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := FreezeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPublishPacing(t *testing.T) {
	t.Parallel()
	dir := publishDir(t, 12) // successes r0 r2 r4 r6 r8 r10
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	pub := &fakePublisher{clock: clock, limited: map[string]int{"r2": 1}, fail: map[string]bool{"r6": true}}
	var progress bytes.Buffer
	opts := PublishOptions{Publisher: pub, MinInterval: time.Second, MaxPerHour: 3, Clock: clock, Progress: &progress}
	err := Publish(t.Context(), dir, opts)
	if !errors.Is(err, ErrPublish) || !strings.Contains(err.Error(), "1 of 6") {
		t.Fatalf("err = %v, want ErrPublish for 1 of 6", err)
	}
	wantCalls := "r0 r2 r2 r4 r6 r8 r10"
	if got := strings.Join(pub.calls, " "); got != wantCalls {
		t.Fatalf("calls %q, want %q", got, wantCalls)
	}
	for i := 1; i < len(pub.at); i++ {
		if gap := pub.at[i].Sub(pub.at[i-1]); gap < time.Second {
			t.Errorf("write %d came %s after the previous one, want ≥ 1s", i, gap)
		}
	}
	if gap := pub.at[2].Sub(pub.at[1]); gap < 90*time.Second {
		t.Errorf("retry came %s after the rate limit, want ≥ 90s", gap)
	}
	// r0, r2, r4 opened PRs; r6 failed; r8 is the 4th PR: it must wait for
	// the hour that started with r0 to roll.
	if gap := pub.at[5].Sub(pub.at[0]); gap < time.Hour {
		t.Errorf("4th PR came %s after the 1st, want ≥ 1h (3 per hour)", gap)
	}
	latest := Latest(mustRead(t, dir))
	for id, want := range map[string]string{"r0": "pull/1", "r2": "pull/1", "r10": "pull/1", "r6": "", "r1": ""} {
		if r := latest[id]; !strings.HasSuffix(r.PRURL, want) || (want != "") != (r.PublishedAt != nil) {
			t.Errorf("%s: pr_url %q published_at %v", id, r.PRURL, r.PublishedAt)
		}
	}
	if !strings.Contains(latest["r6"].PublishError, "422") {
		t.Errorf("r6: publish_error %q", latest["r6"].PublishError)
	}

	// Resume: only the failed one is tried again; the rolling hour carries over.
	pub.fail, pub.calls, pub.at = nil, nil, nil
	if err := Publish(t.Context(), dir, opts); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pub.calls, " "); got != "r6" {
		t.Errorf("resumed calls %q, want r6 only", got)
	}
	if r := Latest(mustRead(t, dir))["r6"]; r.PRURL == "" || r.PublishError != "" {
		t.Errorf("r6 after resume: %+v", r)
	}
}

func TestPublishStopAtHourlyCap(t *testing.T) {
	t.Parallel()
	dir := publishDir(t, 6)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	pub := &fakePublisher{clock: clock}
	err := Publish(t.Context(), dir, PublishOptions{Publisher: pub, MinInterval: 10 * time.Millisecond,
		MaxPerHour: 2, StopAtHourlyCap: true, Clock: clock})
	if !errors.Is(err, ErrHourlyCap) || len(pub.calls) != 2 {
		t.Errorf("err = %v after %d calls, want ErrHourlyCap after 2", err, len(pub.calls))
	}
}

func TestPublishRealClockSmallInterval(t *testing.T) {
	t.Parallel()
	dir := publishDir(t, 4)
	pub := &fakePublisher{clock: &fakeClock{}}
	start := time.Now()
	if err := Publish(t.Context(), dir, PublishOptions{Publisher: pub, MinInterval: 5 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if len(pub.calls) != 2 || time.Since(start) < 5*time.Millisecond {
		t.Errorf("%d calls in %s", len(pub.calls), time.Since(start))
	}
	if err := Publish(t.Context(), dir, PublishOptions{}); !errors.Is(err, ErrNoPublisher) {
		t.Errorf("no publisher: %v", err)
	}
}

func mustRead(t *testing.T, dir string) []RepoResult {
	t.Helper()
	rs, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
