package github

import (
	"errors"
	"testing"
	"time"

	gh "github.com/google/go-github/v60/github"
)

func TestParseRepoURL(t *testing.T) {
	tests := []struct {
		source, owner, repo string
		ok                  bool
	}{
		{"https://ghe.example.com/acme/app.git", "acme", "app", true},
		{"https://ghe.example.com/acme/app", "acme", "app", true},
		{"git@ghe.example.com:acme/app.git", "acme", "app", true},
		{"https://github.com/acme/app", "", "", false},
		{"../repos/app", "", "", false},
		{"https://ghe.example.com/acme", "", "", false},
	}
	for _, tt := range tests {
		owner, repo, err := ParseRepoURL("https://ghe.example.com", tt.source)
		if (err == nil) != tt.ok || owner != tt.owner || repo != tt.repo {
			t.Errorf("ParseRepoURL(%q) = %q, %q, %v", tt.source, owner, repo, err)
		}
		if err != nil && !errors.Is(err, ErrNotOnServer) {
			t.Errorf("ParseRepoURL(%q) error %v does not match ErrNotOnServer", tt.source, err)
		}
	}
}

func TestRateLimitWait(t *testing.T) {
	after := 42 * time.Second
	tests := []struct {
		name string
		err  error
		want time.Duration // 0: not a rate limit
	}{
		{"secondary with Retry-After", &gh.AbuseRateLimitError{RetryAfter: &after}, after},
		{"secondary without", &gh.AbuseRateLimitError{}, DefaultRateLimitWait},
		{"primary, reset passed", &gh.RateLimitError{Rate: gh.Rate{Reset: gh.Timestamp{Time: time.Now().Add(-time.Minute)}}}, DefaultRateLimitWait},
		{"other", errors.New("boom"), 0},
	}
	for _, tt := range tests {
		wait, ok := RateLimitWait(tt.err)
		if ok != (tt.want > 0) || (ok && wait != tt.want) {
			t.Errorf("%s: RateLimitWait = %v, %v; want %v", tt.name, wait, ok, tt.want)
		}
	}
	if _, ok := RateLimitWait(nil); ok {
		t.Error("RateLimitWait(nil) is a rate limit")
	}
}
