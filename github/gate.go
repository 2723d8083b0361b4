package github

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	gh "github.com/google/go-github/v60/github"
)

// ActionsBotLogin is the login behind the Actions GITHUB_TOKEN.
const ActionsBotLogin = "github-actions[bot]"

// Statuses written to the status output when the gate stops a run; never
// "success".
const (
	StatusSkipped = "skipped" // not for us: no trigger phrase, our own comment, a deletion
	StatusRefused = "refused" // for us, but the actor may not trigger runs
)

// GateOptions configure Gate.
type GateOptions struct {
	// Trigger is a phrase (such as "@runner") a comment must contain, as a
	// whole word, case-insensitively; "" accepts every comment. For issues
	// events it is looked for in the title and body.
	Trigger string
	// AllowBots lists bot logins (with or without the "[bot]" suffix) that
	// may trigger runs; "*" allows every bot. Other bots are refused.
	AllowBots []string
	// SelfLogin is the login of the token's identity (see SelfLogin); its
	// comments never trigger a run.
	SelfLogin string
}

// Decision is the gate's verdict. When Run is false the caller makes no
// model call, prints Reason on stderr and writes Status to GITHUB_OUTPUT.
type Decision struct {
	Run    bool
	Status string // "" when Run; StatusSkipped or StatusRefused otherwise
	Reason string
}

// Outputs are the GITHUB_OUTPUT pairs of a run the gate stopped.
func (d Decision) Outputs() []Output {
	return []Output{{Name: "status", Value: d.Status}, {Name: "exit-code", Value: "0"}}
}

func run(reason string, a ...any) Decision {
	return Decision{Run: true, Reason: fmt.Sprintf(reason, a...)}
}

func skip(reason string, a ...any) Decision {
	return Decision{Status: StatusSkipped, Reason: fmt.Sprintf(reason, a...)}
}

func refuse(reason string, a ...any) Decision {
	return Decision{Status: StatusRefused, Reason: fmt.Sprintf(reason, a...)}
}

// gated reports whether an event can be started by people other than the
// repository's writers.
func gated(name string) bool {
	switch name {
	case EventIssueComment, EventIssues, EventReviewComment, EventPullRequestReview:
		return true
	}
	return false
}

// Gate decides whether an event may start a run. Events other than issue
// comments, issues and review comments always run (push, schedule and
// dispatch need write access already). For the gated ones: deletions and
// comments written by the runner (SelfLogin, or carrying a runner marker)
// are skipped, comments without the trigger phrase are skipped, bots are
// refused unless allowed by name, and every other actor (and the comment's
// author, when different) must have admin, maintain or write permission
// according to the collaborator permission API; author_association is not
// trusted. An error means the permission could not be read (not a refusal).
func Gate(ctx context.Context, client *gh.Client, ev *Event, o GateOptions) (Decision, error) {
	c := &ev.GitHub
	if !gated(c.EventName) {
		return run("event %s is not gated", c.EventName), nil
	}
	if c.Action == "deleted" {
		return skip("%s was deleted", c.EventName), nil
	}
	if d, stop := gateText(ev, o); stop {
		return d, nil
	}
	actors := []string{c.Actor}
	if c.CommentAuthor != "" && !strings.EqualFold(c.CommentAuthor, c.Actor) {
		actors = append(actors, c.CommentAuthor)
	}
	for _, a := range actors {
		d, err := gateActor(ctx, client, c, a, o)
		if err != nil || !d.Run {
			return d, err
		}
	}
	return run("%s may trigger runs", strings.Join(actors, " and ")), nil
}

// gateText applies the self and trigger-phrase checks.
func gateText(ev *Event, o GateOptions) (Decision, bool) {
	c := &ev.GitHub
	author, text := c.CommentAuthor, c.CommentBody
	if c.EventName == EventIssues {
		author, text = c.Actor, c.Title+"\n"+issueBody(ev)
	}
	if o.SelfLogin != "" && (strings.EqualFold(author, o.SelfLogin) || strings.EqualFold(c.Actor, o.SelfLogin)) {
		return skip("written by the runner's own identity %s", o.SelfLogin), true
	}
	if c.EventName != EventIssues && HasMarker(text) {
		return skip("the comment carries a runner marker"), true
	}
	if o.Trigger != "" && !ContainsPhrase(text, o.Trigger) {
		return skip("no trigger phrase %q", o.Trigger), true
	}
	return Decision{}, false
}

func issueBody(ev *Event) string {
	issue, _ := ev.Event["issue"].(map[string]any)
	body, _ := issue["body"].(string)
	return body
}

// gateActor checks one login: bots by name, people by permission.
func gateActor(ctx context.Context, client *gh.Client, c *Context, login string, o GateOptions) (Decision, error) {
	if login == "" {
		return refuse("the event names no actor"), nil
	}
	if IsBot(login) || (strings.EqualFold(login, c.Actor) && c.ActorType == "Bot") {
		if botAllowed(login, o.AllowBots) {
			return run("bot %s is allowed", login), nil
		}
		return refuse("bot %s is not in allow-bots", login), nil
	}
	perm, err := permission(ctx, client, c.Owner, c.Repo, login)
	if err != nil {
		if isStatus(err, http.StatusNotFound) {
			return refuse("%s is not a collaborator of %s", login, c.Repository), nil
		}
		return Decision{}, fmt.Errorf("github: permission of %s: %w", login, err)
	}
	if perm.writes() {
		return run("%s has %s permission", login, perm.name()), nil
	}
	return refuse("%s has %s permission on %s; write, maintain or admin is needed", login, perm.name(), c.Repository), nil
}

// IsBot reports whether a login is a bot account's ("…[bot]").
func IsBot(login string) bool { return strings.HasSuffix(strings.ToLower(login), "[bot]") }

func botAllowed(login string, allow []string) bool {
	base := strings.TrimSuffix(strings.ToLower(login), "[bot]")
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "*" || strings.TrimSuffix(a, "[bot]") == base {
			return true
		}
	}
	return false
}

type permissionLevel struct {
	Permission string `json:"permission"` // admin, write, read, none
	RoleName   string `json:"role_name"`  // admin, maintain, write, triage, read, or a custom role
}

func (p permissionLevel) writes() bool {
	return slices.Contains([]string{"admin", "write"}, p.Permission) ||
		slices.Contains([]string{"admin", "maintain", "write"}, p.RoleName)
}

func (p permissionLevel) name() string { return cmp.Or(p.RoleName, p.Permission, "no") }

// permission reads GET /repos/{owner}/{repo}/collaborators/{user}/permission,
// the endpoint of Repositories.GetPermissionLevel, decoding role_name too
// (go-github v60's RepositoryPermissionLevel lacks it).
func permission(ctx context.Context, client *gh.Client, owner, repo, user string) (permissionLevel, error) {
	var p permissionLevel
	u := fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(user))
	req, err := client.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return p, err
	}
	_, err = client.Do(ctx, req, &p)
	return p, err
}

// ContainsPhrase reports whether text contains phrase case-insensitively,
// not as part of a longer word ("@runner" is not in "@runnerbot").
func ContainsPhrase(text, phrase string) bool {
	if phrase == "" {
		return true
	}
	lt, lp := strings.ToLower(text), strings.ToLower(phrase)
	for from := 0; ; {
		i := strings.Index(lt[from:], lp)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(lp)
		before, _ := utf8.DecodeLastRuneInString(lt[:start])
		after, _ := utf8.DecodeRuneInString(lt[end:])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		from = start + 1
	}
}

func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-')
}

// SelfLogin returns the login of the client's token: Users.Get("") for a
// personal or app user token; the Actions GITHUB_TOKEN may not read it (403),
// and is then github-actions[bot]. A GitHub App installation token also gets
// 403; pass its "<app-slug>[bot]" login explicitly instead.
func SelfLogin(ctx context.Context, client *gh.Client) (string, error) {
	u, _, err := client.Users.Get(ctx, "")
	if err == nil {
		return u.GetLogin(), nil
	}
	if isStatus(err, http.StatusForbidden) {
		return ActionsBotLogin, nil
	}
	return "", fmt.Errorf("github: identity of the token: %w", err)
}
