package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// checkWireRun checks the 3-step session every wire's e2e test runs:
// run.started names the wire, one retry (the scripted overload), three
// steps ending tool-calls … stop, and the patch writes fixed. It returns
// the steps.
func checkWireRun(t *testing.T, out, wire string) []event.StepFinished {
	t.Helper()
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	var rs event.RunStarted
	if err := recs[0].Decode(&rs); err != nil || rs.Wire != wire {
		t.Errorf("run.started wire %q (%v), want %s", rs.Wire, err, wire)
	}
	if n := len(ofType[event.Retry](t, recs)); n != 1 {
		t.Errorf("%d retry events, want 1 (the scripted overload)", n)
	}
	steps := ofType[event.StepFinished](t, recs)
	if len(steps) != 3 || steps[0].FinishReason != "tool-calls" || steps[2].FinishReason != "stop" {
		t.Fatalf("steps %+v", steps)
	}
	if patch, err := os.ReadFile(filepath.Join(out, "changes.patch")); err != nil || !bytes.Contains(patch, []byte("+fixed")) {
		t.Fatalf("patch (%v):\n%s", err, patch)
	}
	return steps
}

// checkReplay replays cassette on a fresh repository, with no endpoint and
// no key, and expects the same fix.
func checkReplay(t *testing.T, spec, cassette string, args ...string) {
	t.Helper()
	_, repo := smallRepo(t)
	res := runRunner(t, repo, baseEnv(t), append([]string{"exec", spec, "--out", t.TempDir(), "--replay", cassette, "--quiet"}, args...)...)
	if res.code != 0 {
		t.Fatalf("replay exit %d\n%s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "status.txt")); string(got) != "fixed\n" {
		t.Errorf("replayed status.txt %q", got)
	}
}

// checkContinuedPrefix: the first continued request starts with the
// earlier run's last request, less its closing "]}", so the cache hits.
func checkContinuedPrefix(t *testing.T, earlier, continued string) {
	t.Helper()
	if !strings.HasPrefix(continued, strings.TrimSuffix(earlier, "]}")) {
		t.Errorf("the continued request does not start with the earlier request's bytes")
	}
}
