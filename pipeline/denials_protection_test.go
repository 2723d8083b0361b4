package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestDeniedByProtectionNamesIt: a read of a protected .env, a read in the
// runner's .runner state and an edit no rule allows are refused; each
// says what refused it wherever a rule would be named: the
// permission.denied event and run.finished's denied_calls (protection
// ".env" / ".runner", rule null), summary.md's Denials table (the Rule
// column: "built-in .env protection", not "default deny"), and the tool
// result the model reads, which also says how to lift the .env one. A
// call no rule and no protection decided is still the default deny.
func TestDeniedByProtectionNamesIt(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, strings.Replace(runSpec, "  edit:\n    \"**\": allow\n", "  edit:\n    \"src/**\": allow\n", 1)+"  max_denials: 10\n")
	mustWrite(t, filepath.Join(repo, ".env"), "TOKEN=x\n")
	run := testRun{specFile: spec, repo: repo, replies: []llmtest.Reply{
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{
			llmtest.Call("read", `{"path":".env"}`),
			llmtest.Call("read", `{"path":".runner/runs/x/events.jsonl"}`),
			llmtest.Call("write", `{"path":"notes.txt","content":"x\n"}`),
		}}.Reply(),
		llmtest.Turn{Text: "Could not."}.Reply()}}.exec(t)
	recs, out, srv := run.recs, run.out, run.srv
	want := map[string]string{".env": ".env", ".runner/runs/x/events.jsonl": ".runner", "notes.txt": ""}
	var denied []event.PermissionDenied
	for _, r := range recs {
		if r.Type == "permission.denied" {
			var d event.PermissionDenied
			if err := r.Decode(&d); err != nil {
				t.Fatal(err)
			}
			denied = append(denied, d)
		}
	}
	var fin event.RunFinished
	if err := recs[len(recs)-1].Decode(&fin); err != nil {
		t.Fatal(err)
	}
	if len(denied) != 3 || len(fin.DeniedCalls) != 3 {
		t.Fatalf("denials %+v, denied_calls %+v; want 3 each", denied, fin.DeniedCalls)
	}
	for i, d := range denied {
		if p, ok := want[d.Pattern]; !ok || d.Rule != nil || d.Protection != p || fin.DeniedCalls[i].Protection != p {
			t.Errorf("denial %+v (denied_calls %+v), want protection %q, rule null", d, fin.DeniedCalls[i], p)
		}
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	t.Logf("summary.md:\n%s", summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []struct{ pattern, rule string }{
		{".env", "built-in .env protection"}, {".runner/runs/x/events.jsonl", "built-in .runner protection"}, {"notes.txt", "default deny"},
	} {
		if !strings.Contains(string(summary), "| `"+row.pattern+"` | "+row.rule+" |") {
			t.Errorf("summary.md has no Denials row for %s with Rule %q:\n%s", row.pattern, row.rule, summary)
		}
	}
	// The second request carries the tool results the model read.
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Raw, &body); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range body.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 3 {
		t.Fatalf("tool results %q", results)
	}
	if r := results[0]; !strings.Contains(r, `Permission denied: read ".env" (built-in .env protection)`) ||
		strings.Contains(r, "default deny") || !strings.Contains(r, `read: {".env": allow}`) {
		t.Errorf(".env result %q: want the protection named and how to lift it, no default deny", r)
	}
	if r := results[1]; !strings.Contains(r, "(built-in .runner protection)") || !strings.Contains(r, "no rule can allow") {
		t.Errorf(".runner result %q: want the protection named and that no rule lifts it", r)
	}
	if r := results[2]; !strings.Contains(r, "(no rule allows it (default deny))") {
		t.Errorf("notes.txt result %q: want the default deny", r)
	}
}
