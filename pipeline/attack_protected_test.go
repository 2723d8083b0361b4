package pipeline

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// coversSpec lets the agent run make targets; its checks plant a
// protected file and read it.
const coversSpec = `version: 1
name: covers
model: gpt-4.1-mini
prompt: Build.
permissions:
  read: allow
  edit: allow
  bash: {"make *": allow}
limits: {max_steps: 4}
checks:
  - {name: plant, run: make check-plant}
  - {name: loot, run: make check-loot}
`

// coversMakefile: plant writes protected files the way a run makes them
// (a command writing one, in the root, in a directory it makes that git
// ignores, in an ignored directory that was there; one brought from
// another branch by git); loot reads them all into loot/agent; the
// checks do the same with a check's own file.
const coversMakefile = `plant:
	printf 'API_TOKEN=$(SECRET)\n' > .env.local
	mkdir -p dist && printf 'API_TOKEN=$(SECRET)\n' > dist/.env
	printf 'API_TOKEN=$(SECRET)\n' > build/.env.build
	git show other:.env.production > .env.production
loot:
	mkdir -p loot
	-cat .env.local dist/.env build/.env.build .env.production > loot/agent 2>&1
check-plant:
	printf 'CHECK_TOKEN=$(CHECK_SECRET)\n' > .env.check
check-loot:
	-cat .env.check
`

// coversRun is what one run of the covers attack left.
type coversRun struct {
	recs []event.Record
	repo string
	err  error
}

// runCoversAttack runs the attack through Exec with the layers pinned
// (pin, "" for every available one) and the spec's extra section.
func runCoversAttack(t *testing.T, pin, section, secret, checkSecret, gitSecret string) coversRun {
	t.Helper()
	mf := strings.NewReplacer("$(SECRET)", secret, "$(CHECK_SECRET)", checkSecret).Replace(coversMakefile)
	repo := gittest.Repo(t, map[string]string{"Makefile": mf, ".gitignore": "dist/\nbuild/\nloot/\n"})
	mustWrite(t, filepath.Join(repo, "build", "old.o"), "object\n") // an ignored directory there before the run
	gittest.Run(t, repo, "checkout", "-qb", "other")
	mustWrite(t, filepath.Join(repo, ".env.production"), "API_TOKEN="+gitSecret+"\n")
	gittest.Run(t, repo, "add", ".env.production")
	gittest.Run(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "prod")
	gittest.Run(t, repo, "checkout", "-q", "-")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	call := func(cmd string) llmtest.Reply {
		return llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"`+cmd+`"}`)}}.Reply()
	}
	r := testRun{spec: coversSpec + section, repo: repo, pin: pin,
		replies: []llmtest.Reply{call("make plant"), call("make loot"), llmtest.Turn{Text: "Built."}.Reply()}}.exec(t)
	return coversRun{recs: r.recs, repo: repo, err: r.err}
}

// lootOf returns what the agent's loot command and the loot check read,
// the second bash call's sandbox_refresh metadata and the loot check's.
func lootOf(t *testing.T, c coversRun) (agent, check string, bashRefresh map[string]any, checkRefresh *event.SandboxRefresh) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(c.repo, "loot", "agent"))
	calls := 0
	for _, r := range c.recs {
		p, err := r.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case event.ToolCompleted:
			if calls++; calls == 2 {
				bashRefresh, _ = p.Metadata["sandbox_refresh"].(map[string]any)
			}
		case event.CheckFinished:
			if p.Name == "loot" {
				check, checkRefresh = p.Output, p.SandboxRefresh
			}
		}
	}
	return string(b), check, bashRefresh, checkRefresh
}

// TestExecCoversProtectedFilesThatAppear runs the attack for real with
// each layer pinned on its own and both: the agent's first command makes
// protected .env files (in the root, in a new ignored directory, in an
// ignored directory that was there, one from another branch via git
// show) and its second cats them; a check makes one and the next check
// cats it. Neither the second command nor the second check reads a
// secret, and each says in its event what was newly hidden (the tool's
// metadata, the check's sandbox_refresh). Mode off is the control: the
// same attack reads everything.
func TestExecCoversProtectedFilesThatAppear(t *testing.T) {
	requireTool(t, "make")
	wantBash := []string{".env.local", ".env.production", "build/.env.build", "dist/.env"}
	for pin, layers := range layerPins() {
		t.Run(pin, func(t *testing.T) {
			for _, l := range layers {
				if !slices.Contains(sandbox.Probe().Available(), l) {
					t.Skipf("layer %s is not available here: %s", l, sandbox.Probe().Missing())
				}
			}
			secret, checkSecret, gitSecret := "agentsecret-4f1d90ab", "checksecret-7a2be013", "gitsecret-90dd3c15"
			c := runCoversAttack(t, pin, "", secret, checkSecret, gitSecret)
			agent, check, bashRef, checkRef := lootOf(t, c)
			for _, s := range []string{secret, gitSecret} {
				if strings.Contains(agent, s) {
					t.Errorf("the agent's second command read %s from a protected file the first made:\n%s", s, agent)
				}
			}
			if strings.Contains(check, checkSecret) {
				t.Errorf("the second check read the protected file the first made:\n%s", check)
			}
			var hidden []string
			if h, ok := bashRef["hidden"].([]any); ok {
				for _, p := range h {
					hidden = append(hidden, p.(string))
				}
			}
			slices.Sort(hidden)
			if !slices.Equal(hidden, wantBash) {
				b, _ := json.Marshal(bashRef)
				t.Errorf("the second command's sandbox_refresh is %s, want it to hide %v", b, wantBash)
			}
			if checkRef == nil || !slices.Equal(checkRef.Hidden, []string{".env.check"}) {
				t.Errorf("the loot check's sandbox_refresh is %+v, want it to hide .env.check", checkRef)
			}
		})
	}
}

// TestExecCoversControl: the same attack with sandbox.mode off reads every
// secret, so the test above can fail. The check that read the protected
// file the first check made shows it in its event redacted: the value
// joined the redactor when the first check returned (afterCommand).
func TestExecCoversControl(t *testing.T) {
	requireTool(t, "make")
	secret, checkSecret, gitSecret := "agentsecret-4f1d90ab", "checksecret-7a2be013", "gitsecret-90dd3c15"
	c := runCoversAttack(t, "", "sandbox: {mode: off}\n", secret, checkSecret, gitSecret)
	agent, check, _, _ := lootOf(t, c)
	if strings.Count(agent, secret) != 3 || !strings.Contains(agent, gitSecret) || !strings.Contains(check, "CHECK_TOKEN="+event.Redacted) {
		t.Errorf("unsandboxed, the attack should read every secret:\nagent: %s\ncheck: %s", agent, check)
	}
	if strings.Contains(check, checkSecret) {
		t.Errorf("the check's event holds the value of a protected file made during the run:\n%s", check)
	}
}

// requireTool skips the test when a program the attack uses is missing.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed (%v): .ci/run installs it", name, err)
	}
}
