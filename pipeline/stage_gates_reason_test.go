package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestGateEditRulesEachPathItsReason: a command writes into an edit-denied
// path (.github/**) and links a file outside the work tree into it; the
// edit_rules gate names each path with the reason that denies it: the
// .github/** rule for the workflow, the external_directory protection for
// the link (it points out of the tree), never one path's rule for all.
func TestGateEditRulesEachPathItsReason(t *testing.T) {
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("make is not installed")
	}
	outside := filepath.Join(t.TempDir(), "id_rsa")
	mustWrite(t, outside, "outside\n")
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\tmkdir -p .github/workflows && echo 'on: push' > .github/workflows/evil.yml\n" +
		"\tln -s " + outside + " key\n"})
	code, recs, _ := gateRun(t, repo, "", makeTurn())
	gates, fin := gatesOf(t, recs)
	if code != ExitTaskFailed || fin.Status != event.StatusViolation || len(gates) != 1 || gates[0].Gate != event.GateEditRules {
		t.Fatalf("exit %d, status %s, gates %+v; want exit 1, violation, one edit_rules gate", code, fin.Status, gates)
	}
	g := gates[0]
	if strings.Join(g.Paths, " ") != ".github/workflows/evil.yml key" {
		t.Errorf("paths %q, want the workflow and the link", g.Paths)
	}
	msg := g.Message
	t.Log(msg)
	wf, link := strings.Index(msg, ".github/workflows/evil.yml ("), strings.Index(msg, "key (")
	if wf < 0 || link < 0 {
		t.Fatalf("message %q does not give each path its own reason", msg)
	}
	wfWhy, linkWhy := msg[wf:link], msg[link:]
	if wf > link {
		wfWhy, linkWhy = msg[wf:], msg[link:wf]
	}
	if !strings.Contains(wfWhy, `.github/**`) || strings.Contains(wfWhy, "external_directory") {
		t.Errorf("the workflow's reason %q, want the .github/** rule", wfWhy)
	}
	if !strings.Contains(linkWhy, "outside the work tree") || !strings.Contains(linkWhy, "external_directory") ||
		strings.Contains(linkWhy, ".github") {
		t.Errorf("the link's reason %q, want the external_directory protection", linkWhy)
	}
	if fin.Error == nil || !strings.Contains(fin.Error.Message, "external_directory") {
		t.Errorf("run.finished error %+v, want the link's reason too", fin.Error)
	}
}
