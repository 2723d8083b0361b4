package github

import (
	"net/http"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

const permPath = "/repos/sample-author/Hello-World/collaborators/%s/permission"

func permReply(permission, role string) githubtest.Responder {
	return githubtest.JSON(200, map[string]any{"permission": permission, "role_name": role, "user": map[string]any{"login": "x"}})
}

func TestGate(t *testing.T) {
	type stub struct {
		login string
		reply githubtest.Responder
	}
	tests := []struct {
		name    string
		file    string
		event   string
		edit    func(*Event)
		opts    GateOptions
		stubs   []stub
		run     bool
		status  string
		wantErr bool
	}{
		{name: "write passes", file: "issue_comment.created.issue.json", event: "issue_comment",
			stubs: []stub{{"sample-author", permReply("write", "write")}}, run: true},
		{name: "maintain passes", file: "issue_comment.created.issue.json", event: "issue_comment",
			stubs: []stub{{"sample-author", permReply("write", "maintain")}}, run: true},
		{name: "admin passes", file: "issues.opened.json", event: "issues",
			stubs: []stub{{"sample-author", permReply("admin", "admin")}}, run: true},
		{name: "review comment write passes", file: "pull_request_review_comment.created.json", event: "pull_request_review_comment",
			stubs: []stub{{"sample-author", permReply("write", "write")}}, run: true},
		{name: "read refused", file: "issue_comment.created.issue.json", event: "issue_comment",
			stubs: []stub{{"sample-author", permReply("read", "read")}}, status: StatusRefused},
		{name: "triage refused", file: "issue_comment.created.issue.json", event: "issue_comment",
			stubs: []stub{{"sample-author", permReply("read", "triage")}}, status: StatusRefused},
		{name: "not a collaborator refused", file: "issue_comment.created.issue.json", event: "issue_comment",
			stubs: []stub{{"sample-author", githubtest.Error(404, "Not Found")}}, status: StatusRefused},
		{name: "api failure is an error", file: "issue_comment.created.issue.json", event: "issue_comment",
			stubs: []stub{{"sample-author", githubtest.Error(500, "boom")}}, wantErr: true},
		{name: "association is not trusted", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit:  func(e *Event) { e.Event["comment"].(map[string]any)["author_association"] = "OWNER" },
			stubs: []stub{{"sample-author", permReply("none", "")}}, status: StatusRefused},
		{name: "bot refused", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: setAuthor("renovate[bot]", "Bot"), status: StatusRefused},
		{name: "bot type refused without suffix", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: setAuthor("some-app", "Bot"), status: StatusRefused},
		{name: "bot allowed by name", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: setAuthor("renovate[bot]", "Bot"), opts: GateOptions{AllowBots: []string{"dependabot", "renovate"}}, run: true},
		{name: "other bot still refused", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: setAuthor("evil[bot]", "Bot"), opts: GateOptions{AllowBots: []string{"renovate[bot]"}}, status: StatusRefused},
		{name: "self comment ignored", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: setAuthor("github-actions[bot]", "Bot"), opts: GateOptions{SelfLogin: ActionsBotLogin, AllowBots: []string{"*"}}, status: StatusSkipped},
		{name: "marker comment ignored", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: func(e *Event) { e.GitHub.CommentBody = Marker("t") + "\n@runner fix" }, opts: GateOptions{Trigger: "@runner"}, status: StatusSkipped},
		{name: "no trigger phrase ignored", file: "issue_comment.created.issue.json", event: "issue_comment",
			opts: GateOptions{Trigger: "@runner"}, status: StatusSkipped},
		{name: "trigger phrase inside a word ignored", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: func(e *Event) { e.GitHub.CommentBody = "ping @runnerbot" }, opts: GateOptions{Trigger: "@runner"}, status: StatusSkipped},
		{name: "trigger phrase present", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: func(e *Event) { e.GitHub.CommentBody = "Please @Runner, fix this." }, opts: GateOptions{Trigger: "@runner"},
			stubs: []stub{{"sample-author", permReply("write", "write")}}, run: true},
		{name: "deleted comment ignored", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit: func(e *Event) { e.GitHub.Action = "deleted" }, status: StatusSkipped},
		{name: "editor and author both checked", file: "issue_comment.created.issue.json", event: "issue_comment",
			edit:  func(e *Event) { e.GitHub.Actor = "maintainer" },
			stubs: []stub{{"maintainer", permReply("admin", "admin")}, {"sample-author", permReply("read", "read")}}, status: StatusRefused},
		{name: "pull_request from the repository's branch by a writer", file: "pull_request.opened.json", event: "pull_request",
			stubs: []stub{{"sample-author", permReply("write", "write")}}, run: true},
		{name: "pull_request from the repository's branch by a reader", file: "pull_request.opened.json", event: "pull_request",
			stubs: []stub{{"sample-author", permReply("read", "read")}}, status: StatusRefused},
		{name: "schedule not gated", file: "schedule.json", event: "schedule", run: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := githubtest.New(t, "/api-v3")
			for _, s := range tt.stubs {
				reg.Register(http.MethodGet, sprintf(permPath, s.login), s.reply)
			}
			ev, err := LoadEvent(tt.event, readEvent(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				tt.edit(ev)
			}
			d, err := Gate(t.Context(), reg.Client(), ev, tt.opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if d.Run != tt.run || d.Status != tt.status || (!tt.wantErr && d.Reason == "") {
				t.Errorf("decision = %+v, want run=%v status=%q", d, tt.run, tt.status)
			}
			if !d.Run && d.Status == "success" {
				t.Error("a stopped run must not report success")
			}
		})
	}
}

func setAuthor(login, typ string) func(*Event) {
	return func(e *Event) {
		e.GitHub.Actor, e.GitHub.ActorType, e.GitHub.CommentAuthor = login, typ, login
	}
}

func TestContainsPhrase(t *testing.T) {
	tests := []struct {
		text, phrase string
		want         bool
	}{
		{"@runner fix it", "@runner", true},
		{"hey @RUNNER", "@runner", true},
		{"x@runner", "@runner", false},
		{"@runner-bot", "@runner", false},
		{"@runnerbot then @runner.", "@runner", true},
		{"/fix now", "/fix", true},
		{"/fixes", "/fix", false},
		{"anything", "", true},
	}
	for _, tt := range tests {
		if got := ContainsPhrase(tt.text, tt.phrase); got != tt.want {
			t.Errorf("ContainsPhrase(%q, %q) = %v", tt.text, tt.phrase, got)
		}
	}
}

func TestSelfLogin(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, "/user", githubtest.JSON(200, map[string]any{"login": "pat-owner"}))
	reg.Register(http.MethodGet, "/user", githubtest.Error(403, "Resource not accessible by integration"))
	reg.Register(http.MethodGet, "/user", githubtest.Error(500, "boom"))
	c := reg.Client()
	for _, want := range []string{"pat-owner", ActionsBotLogin} {
		got, err := SelfLogin(t.Context(), c)
		if err != nil || got != want {
			t.Errorf("SelfLogin = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := SelfLogin(t.Context(), c); err == nil {
		t.Error("500 not reported")
	}
}

func TestDecisionOutputs(t *testing.T) {
	d := Decision{Status: StatusRefused, Reason: "x"}
	got := d.Outputs()
	if len(got) != 2 || got[0] != (Output{"status", "refused"}) || got[1] != (Output{"exit-code", "0"}) {
		t.Errorf("outputs = %v", got)
	}
}
