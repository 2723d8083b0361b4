package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// protectedLinkAttack gives the hidden .env, and the .env.example
// template the sandbox does not hide, names of their own: a hard link
// and a rename. With Landlock only the command still cannot read them;
// the runner's file tools, which run outside the sandbox, could.
const protectedLinkAttack = `ln .env linked.txt; ln .env.example example-linked.txt
cp .env.example example.bak; mv .env.example example-moved.txt; mv example.bak .env.example
cat linked.txt >/dev/null 2>&1 && echo "linked.txt readable" || echo "linked.txt unreadable"
exit 0
`

// TestAttackProtectedUnderOtherName: a hard link to the hidden .env
// is refused by the read and grep tools, so the model never gets a
// value of it, even one no redactor knows (a name that does not look
// secret), and the secret gate leaves it out of the patch and every
// file of the out dir. The control in the same run: the template's hard link and
// rename are read as any file. Under each layer set.
func TestAttackProtectedUnderOtherName(t *testing.T) {
	const hidden, shown = "visible-only-to-the-runner-42", "template-value-7"
	avail := runnerLayers(t)
	for _, pin := range []string{"landlock", "namespaces,landlock"} {
		t.Run(pin, func(t *testing.T) {
			for _, l := range strings.Split(pin, ",") {
				if !slices.Contains(avail, l) {
					t.Skipf("layer %s is not available here", l)
				}
			}
			base := t.TempDir()
			repo := filepath.Join(base, "repo")
			gittest.Init(t, repo, map[string]string{"attack.sh": protectedLinkAttack, ".gitignore": ".env\n", ".env.example": "NOTE=" + shown + "\n"})
			mustWriteFile(t, filepath.Join(repo, ".env"), "NOTE="+hidden+"\n")
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{
					llmtest.Call("read", `{"path":"linked.txt"}`),
					llmtest.Call("grep", `{"pattern":"NOTE="}`),
					llmtest.Call("read", `{"path":"example-linked.txt"}`),
					llmtest.Call("read", `{"path":"example-moved.txt"}`),
				}}.Reply(),
				llmtest.Turn{Text: "Done."}.Reply())
			spec := filepath.Join(base, "task.yaml")
			mustWriteFile(t, spec, "version: 1\nname: link\nmodel: gpt-4.1-mini\nprompt: Do it.\n"+
				"permissions:\n  read: allow\n  bash: {\"bash attack.sh\": allow}\nlimits: {max_steps: 4}\n")
			env := append(baseEnv(t), "OPENAI_API_KEY=x", "RUNNER_SANDBOX_LAYERS="+pin)
			res := runRunner(t, repo, env, "exec", spec, "--out", filepath.Join(base, "out"), "--base-url", srv.URL())
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3 (exit %d)\n%s", len(reqs), res.code, res.stderr)
			}
			bash, tools := toolResults(reqs[1].Messages()), toolResults(reqs[2].Messages())
			t.Logf("bash: %s\ntools: %s", bash, tools)
			if strings.Contains(bash, "linked.txt readable") {
				t.Errorf("the command read the hidden .env through its hard link: %s", bash)
			}
			if strings.Contains(bash+tools, hidden) {
				t.Errorf("the model got the hidden .env's value %q", hidden)
			}
			// The control: the same tools read the template under both its
			// new names (with namespaces too: it is no mount).
			if n := strings.Count(tools, shown); n < 2 {
				t.Errorf("the template's value shows %d times in the tools' results, want its link and its rename", n)
			}
			if !strings.Contains(pin, "namespaces") && !strings.Contains(tools, "protected file under another name") {
				t.Errorf("the read tool did not say why linked.txt is refused: %s", tools)
			}
			// The patch: linked.txt is left out of every file of the out dir.
			out := filepath.Join(base, "out")
			for _, name := range []string{"changes.patch", "events.jsonl", "summary.md", "result.json"} {
				data, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(data), hidden) {
					t.Errorf("%s holds the hidden .env's value %q", name, hidden)
				}
			}
			if !strings.Contains(pin, "namespaces") {
				gates := ofType[event.GateFailed](t, readEvents(t, filepath.Join(out, "events.jsonl")))
				if !slices.ContainsFunc(gates, func(g event.GateFailed) bool {
					return g.Gate == event.GateSecret && slices.Contains(g.Paths, "linked.txt")
				}) || res.code != 1 {
					t.Errorf("exit %d, gates %+v: want exit 1 and the secret gate naming linked.txt", res.code, gates)
				}
			}
		})
	}
}
