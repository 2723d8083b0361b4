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
	// AllowEvents names events the gate does not know that may start a
	// run (the allow-events input); their actors are still checked.
	AllowEvents []string
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

// Gate decides whether an event may start a run (gateKindOf says which
// events are gated and how). For the gated ones: deletions and comments
// written by the runner (SelfLogin, or carrying a runner marker) are
// skipped, comments without the trigger phrase are skipped, bots are
// refused unless allowed by name, and every actor the event names must
// have admin, maintain or write permission according to the collaborator
// permission API; author_association is not trusted. An event the gate
// does not know is refused unless GateOptions.AllowEvents names it. An
// error means the permission could not be read (not a refusal).
func Gate(ctx context.Context, client *gh.Client, ev *Event, o GateOptions) (Decision, error) {
	c := &ev.GitHub
	kind := gateKindOf(c)
	switch {
	case c.EventName == EventPush && ev.Event["deleted"] == true:
		return skip("the push deleted %s: there is no commit to work on", cmp.Or(refOf(ev), "its ref")), nil
	case kind == gateNone:
		return run("event %s needs write access to start", c.EventName), nil
	case kind == gateUnknown && !allowedEvent(c.EventName, o.AllowEvents):
		return refuse("event %s is not one the trigger gate knows: it may carry someone else's input; "+
			"if everyone who can cause it may start the agent, name it in the allow-events input (RUNNER_ALLOW_EVENTS=%s)",
			c.EventName, c.EventName), nil
	case kind == gateUnknown && len(eventActors(ev, kind)) == 0:
		return run("event %s is allowed by allow-events and names no actor", c.EventName), nil
	}
	if c.Action == "deleted" {
		return skip("%s was deleted", c.EventName), nil
	}
	if kind == gateComment {
		if d, stop := gateText(ev, o); stop {
			return d, nil
		}
	} else if o.SelfLogin != "" && strings.EqualFold(c.Actor, o.SelfLogin) {
		return skip("started by the runner's own identity %s", o.SelfLogin), nil
	}
	for _, w := range textAuthors(ev, kind) {
		if w.login == "" {
			return refuse("the %s payload does not name the %s (%s is missing or null), so its write access cannot be checked; "+
				"GitHub always sends it: check that GITHUB_EVENT_PATH is the file Actions wrote for the event", c.EventName, w.role, w.key), nil
		}
	}
	actors := eventActors(ev, kind)
	if len(actors) == 0 {
		actors = []actor{{role: "actor"}} // gateActor refuses: the event names no actor
	}
	logins := make([]string, 0, len(actors))
	for _, a := range actors {
		if a.key == prAuthorKey && o.SelfLogin != "" && strings.EqualFold(a.login, o.SelfLogin) {
			logins = append(logins, a.login) // the runner opened it, for a run a writer started
			continue
		}
		d, err := gateActor(ctx, client, c, a, o)
		if err != nil || !d.Run {
			return d, err
		}
		logins = append(logins, a.login)
	}
	return run("%s may trigger runs", strings.Join(logins, " and ")), nil
}

// refOf is a push payload's ref ("" without one).
func refOf(ev *Event) string {
	ref, _ := ev.Event["ref"].(string)
	return ref
}

// needsAPI reports whether Gate will read permissions for ev.
func needsAPI(ev *Event, o GateOptions) bool {
	switch gateKindOf(&ev.GitHub) {
	case gateNone:
		return false
	case gateUnknown:
		return allowedEvent(ev.GitHub.EventName, o.AllowEvents) && len(eventActors(ev, gateUnknown)) > 0
	}
	return true
}

func allowedEvent(name string, allow []string) bool {
	return slices.ContainsFunc(allow, func(e string) bool { return strings.EqualFold(strings.TrimSpace(e), name) })
}

// gateKind is how the gate treats an event.
type gateKind int

const (
	gateNone    gateKind = iota // only writers can cause it: it runs
	gateComment                 // someone's text: self, marker, trigger phrase, then every actor
	gateActors                  // someone else's change: every actor it names
	gateUnknown                 // not known: refused unless allowed, then every actor it names
)

// gateKindOf sorts events by who can cause them:
//   - push, schedule, workflow_dispatch, repository_dispatch, merge_group,
//     workflow_call: only people with write access;
//   - pull_request from a named fork: GitHub gives the run a read-only
//     token and no secrets (review mode reviews forks this way);
//   - issues, issue_comment, pull_request_review, pull_request_review_comment,
//     discussion, discussion_comment: anyone's text;
//   - pull_request from the repository's own branch (or an unnamed head),
//     pull_request_target, workflow_run: anyone's change, since a reader
//     of a private repository may open a pull request from an existing
//     branch;
//   - every other event is unknown.
func gateKindOf(c *Context) gateKind {
	switch c.EventName {
	case EventPush, EventSchedule, EventWorkflowDispatch, EventRepositoryDispatch, EventMergeGroup, EventWorkflowCall:
		return gateNone
	case EventPullRequest:
		if c.HeadRepo != "" && !strings.EqualFold(c.HeadRepo, c.Repository) {
			return gateNone
		}
		return gateActors
	case EventPullRequestTarget:
		return gateActors
	case EventIssueComment, EventIssues, EventReviewComment, EventPullRequestReview, EventDiscussion, EventDiscussionComment:
		return gateComment
	case EventWorkflowRun:
		return gateActors
	}
	return gateUnknown
}

// actor is a login the gate checks: who it is in the event (role), the
// payload key it came from and the account type the payload gives.
type actor struct {
	login, typ string
	role, key  string
}

// eventActors are the logins the event names, each once: the actor, the
// writer of its text (writerOf), and a workflow run's actor and
// triggering actor.
func eventActors(ev *Event, kind gateKind) []actor {
	c := &ev.GitHub
	var out []actor
	add := func(a actor) {
		if a.login != "" && !slices.ContainsFunc(out, func(o actor) bool { return strings.EqualFold(o.login, a.login) }) {
			out = append(out, a)
		}
	}
	add(actor{login: c.Actor, typ: c.ActorType, role: "actor", key: "sender.login"})
	for _, w := range textAuthors(ev, kind) {
		add(w)
	}
	if wr, ok := ev.Event["workflow_run"].(map[string]any); ok {
		for _, k := range []string{"actor", "triggering_actor"} {
			login, typ := userOf(wr, k)
			add(actor{login: login, typ: typ, role: "workflow run's " + strings.ReplaceAll(k, "_", " "), key: "workflow_run." + k + ".login"})
		}
	}
	return out
}

// prAuthorKey is where a payload names the pull request's author.
const prAuthorKey = "pull_request.user.login"

// textAuthors are the authors of the text an event carries: writerOf's,
// and for the review events the pull request's author too.
//   - A review or a push by a writer does not make an outsider's title
//     and body theirs (a synchronize event's sender is the pusher).
func textAuthors(ev *Event, kind gateKind) []actor {
	var out []actor
	if w, ok := writerOf(ev, kind); ok {
		out = append(out, w)
	}
	if n := ev.GitHub.EventName; n == EventPullRequestReview || n == EventReviewComment {
		m, _ := ev.Event["pull_request"].(map[string]any)
		login, typ := userOf(m, "user")
		out = append(out, actor{login: login, typ: typ, role: "pull request's author", key: prAuthorKey})
	}
	return out
}

// writerOf is the author of the text an event carries: a comment's or
// review's author, an issue's or discussion's author (a label or an edit
// by a writer does not make someone else's text theirs), a gated pull
// request's author. ok is false for events without such text.
func writerOf(ev *Event, kind gateKind) (a actor, ok bool) {
	c := &ev.GitHub
	var obj, role string
	switch {
	case c.EventName == EventIssues:
		obj, role = "issue", "issue's author"
	case c.EventName == EventDiscussion:
		obj, role = "discussion", "discussion's author"
	case c.EventName == EventPullRequestReview:
		obj, role = "review", "review's author"
	case kind == gateComment:
		obj, role = "comment", "comment's author"
	case (c.EventName == EventPullRequestTarget || c.EventName == EventPullRequest) && kind == gateActors:
		obj, role = "pull_request", "pull request's author"
	default:
		return actor{}, false
	}
	m, _ := ev.Event[obj].(map[string]any)
	login, typ := userOf(m, "user")
	if obj == "comment" || obj == "review" { // the resolved context is what gateText judged
		if !strings.EqualFold(login, c.CommentAuthor) {
			typ = ""
		}
		login = c.CommentAuthor
	}
	return actor{login: login, typ: typ, role: role, key: obj + ".user.login"}, true
}

// userOf reads m[key].login and m[key].type ("" when absent or null).
func userOf(m map[string]any, key string) (login, typ string) {
	u, _ := m[key].(map[string]any)
	login, _ = u["login"].(string)
	typ, _ = u["type"].(string)
	return login, typ
}

// gateText applies the self and trigger-phrase checks.
func gateText(ev *Event, o GateOptions) (Decision, bool) {
	c := &ev.GitHub
	author, text := c.CommentAuthor, c.CommentBody
	switch c.EventName {
	case EventIssues:
		author, text = c.Actor, c.Title+"\n"+issueBody(ev)
	case EventDiscussion:
		author, text = c.Actor, c.Title+"\n"+discussionBody(ev)
	}
	if o.SelfLogin != "" && (strings.EqualFold(author, o.SelfLogin) || strings.EqualFold(c.Actor, o.SelfLogin)) {
		return skip("written by the runner's own identity %s", o.SelfLogin), true
	}
	if c.EventName != EventIssues && c.EventName != EventDiscussion && HasMarker(text) {
		return skip("the comment carries a runner marker"), true
	}
	if o.Trigger != "" && !ContainsPhrase(text, o.Trigger) {
		return skip("no trigger phrase %q", o.Trigger), true
	}
	return Decision{}, false
}

func discussionBody(ev *Event) string {
	d, _ := ev.Event["discussion"].(map[string]any)
	body, _ := d["body"].(string)
	return body
}

func issueBody(ev *Event) string {
	issue, _ := ev.Event["issue"].(map[string]any)
	body, _ := issue["body"].(string)
	return body
}

// gateActor checks one login: bots by name, people by permission.
func gateActor(ctx context.Context, client *gh.Client, c *Context, a actor, o GateOptions) (Decision, error) {
	login := a.login
	if login == "" {
		return refuse("the event names no actor"), nil
	}
	if IsBot(login) || a.typ == "Bot" || (strings.EqualFold(login, c.Actor) && c.ActorType == "Bot") {
		if botAllowed(login, o.AllowBots) {
			return run("bot %s is allowed", login), nil
		}
		return refuse("bot %s (the %s) is not in allow-bots; to let it start runs, name it in the allow-bots input (RUNNER_ALLOW_BOTS=%s)",
			login, a.role, strings.TrimSuffix(strings.ToLower(login), "[bot]")), nil
	}
	perm, err := permission(ctx, client, c.Owner, c.Repo, login)
	if err != nil {
		if isStatus(err, http.StatusNotFound) {
			return refuse("%s is not a collaborator of %s (the %s, %s)", login, c.Repository, a.role, a.key), nil
		}
		return Decision{}, fmt.Errorf("github: permission of %s: %w", login, err)
	}
	if perm.writes() {
		return run("%s has %s permission", login, perm.name()), nil
	}
	return refuse("%s has %s permission on %s; write, maintain or admin is needed (the %s, %s)",
		login, perm.name(), c.Repository, a.role, a.key), nil
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
