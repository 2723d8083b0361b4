package github

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

// gatePerms are the collaborator permissions the fake API gives the
// logins of testdata/gate; any other login is not a collaborator (404).
var gatePerms = map[string]string{"sample-author": "admin", "sample-maintainer": "write", "reader": "read"}

// TestGatePayloads runs the trigger gate over the payload variants of
// testdata/gate (see its README): forks, deleted forks, a reader's pull
// request from the repository's branch and a writer's push onto it, edits
// and labels by a writer on someone else's text, bots, every author_association,
// events the gate does not know, deleted refs, null and missing fields.
// Each either runs, is skipped or refused with the reason given, or fails
// to load naming the key. Who asked is judged by the collaborator
// permission API alone.
func TestGatePayloads(t *testing.T) {
	tests := []struct {
		file, event string
		opts        GateOptions
		want        string // "run", StatusSkipped, StatusRefused, or "error"
		reason      string // in the decision's reason or the error
		asked       []string
	}{
		{file: "pull_request.fork.json", event: "pull_request", want: "run"},
		{file: "pull_request.fork-deleted.json", event: "pull_request", want: StatusRefused,
			reason: "outsider is not a collaborator", asked: []string{"outsider"}},
		{file: "pull_request.edited.json", event: "pull_request", want: "run", asked: []string{"sample-author"}},
		{file: "pull_request.reopened.json", event: "pull_request", want: "run", asked: []string{"sample-author"}},
		{file: "pull_request.closed.json", event: "pull_request", want: "run", asked: []string{"sample-author"}},
		{file: "pull_request.labeled.json", event: "pull_request", want: "run", asked: []string{"sample-author"}},
		{file: "pull_request.ready_for_review.json", event: "pull_request", want: "run", asked: []string{"sample-author"}},
		{file: "pull_request.same-repo-reader.json", event: "pull_request", want: StatusRefused,
			reason: "reader has read permission on sample-author/Hello-World", asked: []string{"reader"}},
		{file: "pull_request.synchronize-by-writer.json", event: "pull_request", want: StatusRefused,
			reason: "the pull request's author, pull_request.user.login", asked: []string{"sample-maintainer", "reader"}},
		{file: "pull_request.null-user.json", event: "pull_request", want: StatusRefused,
			reason: "pull_request.user.login is missing or null"},
		{file: "pull_request.dependabot.json", event: "pull_request", want: StatusRefused,
			reason: "allow-bots input (RUNNER_ALLOW_BOTS=dependabot)"},
		{file: "pull_request.dependabot.json", event: "pull_request", opts: GateOptions{AllowBots: []string{"dependabot"}}, want: "run"},
		{file: "pull_request.renovate.json", event: "pull_request", want: StatusRefused,
			reason: "allow-bots input (RUNNER_ALLOW_BOTS=renovate)"},
		{file: "pull_request.renovate.json", event: "pull_request", opts: GateOptions{AllowBots: []string{"renovate[bot]"}}, want: "run"},
		{file: "pull_request_target.fork.json", event: "pull_request_target", want: StatusRefused,
			reason: "outsider is not a collaborator", asked: []string{"outsider"}},
		{file: "pull_request_target.fork-labeled.json", event: "pull_request_target", want: StatusRefused,
			reason: "the pull request's author, pull_request.user.login", asked: []string{"sample-maintainer", "outsider"}},
		{file: "pull_request_target.fork-deleted.json", event: "pull_request_target", want: StatusRefused,
			reason: "outsider is not a collaborator", asked: []string{"sample-maintainer", "outsider"}},
		{file: "pull_request_target.fork-null-user.json", event: "pull_request_target", want: StatusRefused,
			reason: "pull_request.user.login is missing or null", asked: nil},
		{file: "pull_request_target.same-repo.json", event: "pull_request_target", want: "run", asked: []string{"sample-author"}},
		{file: "pull_request_target.same-repo-reader.json", event: "pull_request_target", want: StatusRefused,
			reason: "reader has read permission", asked: []string{"reader"}},
		{file: "issue_comment.edited.json", event: "issue_comment", opts: GateOptions{Trigger: "@runner"}, want: "run",
			asked: []string{"sample-author"}},
		{file: "issue_comment.edited-by-maintainer.json", event: "issue_comment", opts: GateOptions{Trigger: "@runner"},
			want: StatusRefused, reason: "the comment's author", asked: []string{"sample-maintainer", "outsider"}},
		{file: "issue_comment.deleted.json", event: "issue_comment", want: StatusSkipped, reason: "deleted"},
		{file: "issue_comment.bot.json", event: "issue_comment", want: StatusRefused, reason: "bot dependabot[bot]"},
		{file: "issue_comment.bot.json", event: "issue_comment", opts: GateOptions{AllowBots: []string{"dependabot"}}, want: "run"},
		{file: "issue_comment.bot-no-suffix.json", event: "issue_comment", want: StatusRefused,
			reason: "bot Copilot (the comment's author) is not in allow-bots", asked: []string{"sample-maintainer"}},
		{file: "issue_comment.null-user.json", event: "issue_comment", opts: GateOptions{Trigger: "@runner"}, want: StatusRefused,
			reason: "comment.user.login is missing or null"},
		{file: "issue_comment.null-body.json", event: "issue_comment", opts: GateOptions{Trigger: "@runner"}, want: StatusSkipped,
			reason: "no trigger phrase"},
		{file: "issue_comment.no-comment.json", event: "issue_comment", want: "error", reason: "issue_comment payload has no comment"},
		{file: "issue_comment.control-chars.json", event: "issue_comment", opts: GateOptions{Trigger: "@runner"}, want: "run",
			asked: []string{"sample-author"}},
		{file: "issues.labeled-outsider.json", event: "issues", opts: GateOptions{Trigger: "@runner"}, want: StatusRefused,
			reason: "the issue's author, issue.user.login", asked: []string{"sample-maintainer", "outsider"}},
		{file: "issues.edited-by-maintainer.json", event: "issues", opts: GateOptions{Trigger: "@runner"}, want: StatusRefused,
			reason: "outsider is not a collaborator", asked: []string{"sample-maintainer", "outsider"}},
		{file: "issues.null-body.json", event: "issues", want: "run", asked: []string{"sample-author"}},
		{file: "issues.null-user.json", event: "issues", want: StatusRefused, reason: "issue.user.login is missing or null"},
		{file: "pull_request_review.submitted.json", event: "pull_request_review", opts: GateOptions{Trigger: "@runner"},
			want: StatusRefused, reason: "outsider is not a collaborator", asked: []string{"outsider"}},
		{file: "pull_request_review.submitted-writer.json", event: "pull_request_review", opts: GateOptions{Trigger: "@runner"},
			want: "run", asked: []string{"sample-author"}},
		{file: "pull_request_review.writer-on-reader.json", event: "pull_request_review", opts: GateOptions{Trigger: "@runner"},
			want: StatusRefused, reason: "the pull request's author", asked: []string{"sample-author", "reader"}},
		{file: "pull_request_review.null-body.json", event: "pull_request_review", opts: GateOptions{Trigger: "@runner"},
			want: StatusSkipped, reason: "no trigger phrase"},
		{file: "pull_request_review.no-review.json", event: "pull_request_review", want: StatusRefused,
			reason: "review.user.login is missing or null"},
		{file: "discussion.created.json", event: "discussion", opts: GateOptions{Trigger: "@runner"}, want: StatusRefused,
			reason: "outsider is not a collaborator", asked: []string{"outsider"}},
		{file: "discussion.labeled-outsider.json", event: "discussion", opts: GateOptions{Trigger: "@runner"},
			want: StatusRefused, reason: "the discussion's author", asked: []string{"sample-maintainer", "outsider"}},
		{file: "discussion_comment.created.json", event: "discussion_comment", opts: GateOptions{Trigger: "@runner"}, want: "run",
			asked: []string{"sample-maintainer"}},
		{file: "merge_group.checks_requested.json", event: "merge_group", want: "run"},
		{file: "workflow_run.completed-fork.json", event: "workflow_run", want: StatusRefused,
			reason: "outsider is not a collaborator", asked: []string{"outsider"}},
		{file: "workflow_run.completed-writers.json", event: "workflow_run", want: "run",
			asked: []string{"sample-author", "sample-maintainer"}},
		{file: "repository_dispatch.json", event: "repository_dispatch", want: "run"},
		{file: "release.published.json", event: "release", want: StatusRefused, reason: "RUNNER_ALLOW_EVENTS=release"},
		{file: "release.published.json", event: "release", opts: GateOptions{AllowEvents: []string{"release"}},
			want: StatusRefused, reason: "outsider is not a collaborator", asked: []string{"outsider"}},
		{file: "check_suite.requested.json", event: "check_suite", want: StatusRefused, reason: "RUNNER_ALLOW_EVENTS=check_suite"},
		{file: "push.branch-deleted.json", event: "push", want: StatusSkipped, reason: "deleted refs/heads/feature"},
		{file: "workflow_dispatch.inputs.json", event: "workflow_dispatch", want: "run"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+strings.Join(tt.opts.AllowBots, ",")+strings.Join(tt.opts.AllowEvents, ","), func(t *testing.T) {
			var (
				mu    sync.Mutex // the server's goroutine appends, the test reads
				asked []string
			)
			reg := githubtest.New(t, "/api-v3")
			loginRE := regexp.MustCompile(`/collaborators/([^/]+)/permission$`)
			reg.RegisterPrefix(http.MethodGet, "/repos/sample-author/Hello-World/collaborators/", func(w http.ResponseWriter, r *http.Request) {
				login := loginRE.FindStringSubmatch(r.URL.Path)[1]
				mu.Lock()
				asked = append(asked, login)
				mu.Unlock()
				if p, ok := gatePerms[login]; ok {
					permReply(p, p)(w, r)
					return
				}
				githubtest.Error(http.StatusNotFound, "Not Found")(w, r)
			}).AnyTimes(0)
			data, err := os.ReadFile(filepath.Join("testdata", "gate", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			ev, err := LoadEvent(tt.event, data)
			if tt.want == "error" {
				if !errors.Is(err, ErrEvent) || !strings.Contains(err.Error(), tt.reason) {
					t.Fatalf("LoadEvent error = %v, want ErrEvent saying %q", err, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, err := Gate(t.Context(), reg.Client(), ev, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := d.Status
			if d.Run {
				got = "run"
			}
			if got != tt.want || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("decision %+v, want %s with %q", d, tt.want, tt.reason)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("asked the permission of %q, want %q", asked, tt.asked)
			}
		})
	}
}

// TestGateIgnoresAuthorAssociation: the six author_association values a
// comment can carry change nothing; the permission API alone decides.
// An outsider claiming OWNER is refused; the same comment from a writer
// runs whatever it claims.
func TestGateIgnoresAuthorAssociation(t *testing.T) {
	for _, assoc := range []string{"none", "first-time-contributor", "contributor", "collaborator", "member", "owner"} {
		for _, perm := range []string{"", "read", "write"} {
			t.Run(assoc+"/"+perm, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("testdata", "gate", "issue_comment.association-"+assoc+".json"))
				if err != nil {
					t.Fatal(err)
				}
				ev, err := LoadEvent("issue_comment", data)
				if err != nil {
					t.Fatal(err)
				}
				reg := githubtest.New(t, "/api-v3")
				reply := githubtest.Error(http.StatusNotFound, "Not Found")
				if perm != "" {
					reply = permReply(perm, perm)
				}
				reg.Register(http.MethodGet, sprintf(permPath, "outsider"), reply)
				d, err := Gate(t.Context(), reg.Client(), ev, GateOptions{Trigger: "@runner"})
				if err != nil {
					t.Fatal(err)
				}
				if d.Run != (perm == "write") {
					t.Errorf("decision %+v with permission %q and association %s", d, perm, assoc)
				}
			})
		}
	}
}
