package github

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

// TestGateEventsWithOthersInput: every event that can carry someone
// else's input is checked against the actor's permission; an event the
// gate does not know is refused, naming the input that allows it.
func TestGateEventsWithOthersInput(t *testing.T) {
	const repo = `"repository":{"full_name":"sample-author/Hello-World"}`
	fork := `{"action":"opened",` + repo + `,"sender":{"login":"outsider","type":"User"},"pull_request":{"number":7,"user":{"login":"outsider"},` +
		`"title":"t","head":{"ref":"f","sha":"s","repo":{"full_name":"outsider/Hello-World"}},"base":{"ref":"main"}}}`
	own := strings.Replace(fork, "outsider/Hello-World", "sample-author/Hello-World", 1)
	tests := []struct {
		name, event, payload string
		opts                 GateOptions
		perms                map[string]githubtest.Responder
		run                  bool
		status, reason       string
	}{
		{name: "pull_request_target from a fork by an outsider", event: "pull_request_target", payload: fork,
			perms: map[string]githubtest.Responder{"outsider": githubtest.Error(404, "Not Found")}, status: StatusRefused,
			reason: "outsider is not a collaborator"},
		{name: "pull_request from a fork runs with GitHub's read-only token", event: "pull_request", payload: fork, run: true},
		{name: "pull_request_target from a fork by a writer", event: "pull_request_target", payload: fork,
			perms: map[string]githubtest.Responder{"outsider": permReply("write", "write")}, run: true},
		{name: "pull_request_target from the repository's branch by a reader", event: "pull_request_target", payload: own,
			perms: map[string]githubtest.Responder{"outsider": permReply("read", "read")}, status: StatusRefused,
			reason: "outsider has read permission"},
		{name: "pull_request from the repository's branch by a reader", event: "pull_request", payload: own,
			perms: map[string]githubtest.Responder{"outsider": permReply("read", "triage")}, status: StatusRefused,
			reason: "the actor, sender.login"},
		{name: "pull_request from the repository's branch by a writer", event: "pull_request", payload: own,
			perms: map[string]githubtest.Responder{"outsider": permReply("write", "write")}, run: true},
		{name: "discussion_comment by an outsider", event: "discussion_comment",
			payload: `{"action":"created",` + repo + `,"sender":{"login":"outsider"},"discussion":{"number":3,"title":"q"},` +
				`"comment":{"id":1,"body":"@runner do it","user":{"login":"outsider"}}}`,
			opts:  GateOptions{Trigger: "@runner"},
			perms: map[string]githubtest.Responder{"outsider": githubtest.Error(404, "Not Found")}, status: StatusRefused},
		{name: "discussion without the phrase", event: "discussion",
			payload: `{"action":"created",` + repo + `,"sender":{"login":"outsider"},"discussion":{"number":3,"title":"q","body":"hi"}}`,
			opts:    GateOptions{Trigger: "@runner"}, status: StatusSkipped},
		{name: "workflow_run triggered by an outsider", event: "workflow_run",
			payload: `{"action":"completed",` + repo + `,"sender":{"login":"sample-author"},"workflow_run":{"id":9,` +
				`"actor":{"login":"sample-author"},"triggering_actor":{"login":"outsider"}}}`,
			perms: map[string]githubtest.Responder{"sample-author": permReply("admin", "admin"),
				"outsider": githubtest.Error(404, "Not Found")}, status: StatusRefused},
		{name: "unknown event fails closed", event: "watch",
			payload: `{"action":"started",` + repo + `,"sender":{"login":"outsider"}}`, status: StatusRefused,
			reason: "RUNNER_ALLOW_EVENTS=watch"},
		{name: "allowed unknown event checks its actor", event: "watch", opts: GateOptions{AllowEvents: []string{"watch"}},
			payload: `{"action":"started",` + repo + `,"sender":{"login":"outsider"}}`,
			perms:   map[string]githubtest.Responder{"outsider": githubtest.Error(404, "Not Found")}, status: StatusRefused},
		{name: "allowed unknown event with no actor", event: "page_build", opts: GateOptions{AllowEvents: []string{"page_build"}},
			payload: `{` + repo + `}`, run: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := githubtest.New(t, "/api-v3")
			for login, reply := range tt.perms {
				reg.Register(http.MethodGet, sprintf(permPath, login), reply)
			}
			ev, err := LoadEvent(tt.event, []byte(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			ev.GitHub.Repository, ev.GitHub.Owner, ev.GitHub.Repo = "sample-author/Hello-World", "sample-author", "Hello-World"
			d, err := Gate(t.Context(), reg.Client(), ev, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if d.Run != tt.run || d.Status != tt.status || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("decision = %+v, want run=%v status=%q reason with %q", d, tt.run, tt.status, tt.reason)
			}
		})
	}
}
