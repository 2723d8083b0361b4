package e2e

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// TestUnreachableBaseURLFailsFast: a --base-url on a loopback port where
// nothing listens is retried once, not for the whole backoff (a minute of
// retries before exit 3), and the error names the URL and what to check.
func TestUnreachableBaseURLFailsFast(t *testing.T) {
	t.Parallel()
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	spec, repo := smallRepo(t)
	out := t.TempDir()
	res := runRunner(t, repo, append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef"),
		"exec", spec, "--out", out, "--base-url", "http://"+addr+"/v1", "--quiet")
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"gave up after 1 retry", "http://" + addr + "/v1/chat/completions", "nothing listens on " + addr, "--base-url"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	retries := ofType[event.Retry](t, readEvents(t, filepath.Join(out, "events.jsonl")))
	if len(retries) != 1 {
		t.Fatalf("%d retry events, want 1", len(retries))
	}
	if got := retries[0].MaxAttempts; got != 1 { // the console says "retry 1/1", not "1/5"
		t.Errorf("retry event max_attempts %d, want 1", got)
	}
}
