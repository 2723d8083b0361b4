package github

import (
	"cmp"
	"context"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Actions is the GitHub side of one `runner exec` inside GitHub Actions:
// the environment, an API client for it, the event, and the token's
// identity (resolved on first use). Create it with Setup. Without a token
// (GITHUB_TOKEN and GH_TOKEN empty) Client is nil: no API call is made.
type Actions struct {
	Env    *Env
	Client *gh.Client // nil without a token
	Event  *Event
	// Self is the login of the token's identity; SelfLogin fills it.
	Self string
	out  *outbound // nil without a token
}

// TakeNeutralized returns what the client neutralized in the text it
// posted since the last call (see NeutralizeMarkdown).
func (a *Actions) TakeNeutralized() []Neutralized {
	if a == nil || a.out == nil {
		return nil
	}
	return a.out.Take()
}

// Setup reads the Actions environment from environ and loads the event
// (resolving the pull request an issue comment is on). Outside Actions
// (GITHUB_ACTIONS not "true") it returns nil, nil. httpClient may be nil.
// RUNNER_GITHUB_LOGIN, when set, is the token's login (needed for a GitHub
// App installation token, "<app-slug>[bot]", which cannot read its own user).
func Setup(ctx context.Context, environ map[string]string, httpClient *http.Client) (*Actions, error) {
	env, err := LoadEnv(environ)
	if err != nil {
		return nil, err
	}
	if !env.Actions {
		return nil, nil
	}
	var client *gh.Client
	var out *outbound
	if env.Token != "" { // no token, no API call: not even an anonymous one
		if client, out, err = newClient(env, httpClient); err != nil {
			return nil, err
		}
	}
	ev, err := Load(ctx, env, client)
	if err != nil {
		return nil, err
	}
	return &Actions{Env: env, Client: client, Event: ev, Self: environ["RUNNER_GITHUB_LOGIN"], out: out}, nil
}

// HasToken reports whether the API can be called.
func (a *Actions) HasToken() bool { return a.Client != nil }

// SelfLogin returns (and remembers) the token identity's login;
// ErrNoToken without a token.
func (a *Actions) SelfLogin(ctx context.Context) (string, error) {
	if a.Self != "" {
		return a.Self, nil
	}
	if a.Client == nil {
		return "", ErrNoToken
	}
	self, err := SelfLogin(ctx, a.Client)
	if err != nil {
		return "", err
	}
	a.Self = self
	return self, nil
}

// Gate applies the trigger gate to the event with the token's identity as
// SelfLogin. trigger, allowBots and allowEvents are the action's inputs as
// given (the lists split with SplitList).
func (a *Actions) Gate(ctx context.Context, trigger, allowBots, allowEvents string) (Decision, error) {
	o := GateOptions{Trigger: trigger, AllowBots: SplitList(allowBots), AllowEvents: SplitList(allowEvents)}
	if !needsAPI(a.Event, o) {
		return Gate(ctx, nil, a.Event, o)
	}
	if a.Client == nil { // the actor's write access cannot be checked: fail closed
		return refuse("no GITHUB_TOKEN to check %s's write access; %s events need one", a.Event.GitHub.Actor,
			a.Event.GitHub.EventName), nil
	}
	self, err := a.SelfLogin(ctx)
	if err != nil {
		return Decision{}, err
	}
	o.SelfLogin = self
	return Gate(ctx, a.Client, a.Event, o)
}

// Sticky returns the task's sticky comment on the event's issue or pull
// request; ErrNoNumber when the event has none (push, schedule, dispatch).
func (a *Actions) Sticky(ctx context.Context, task string) (*Sticky, error) {
	self, err := a.SelfLogin(ctx)
	if err != nil {
		return nil, err
	}
	return NewSticky(a.Client, a.Event, task, self)
}

// PublishPullRequest pushes the patch (push.Branch, to the repository's
// HTTPS remote with the token unless push.RemoteURL/Token are set) and
// opens or updates the pull request for that branch. pr.Base is required;
// without it nothing is pushed.
func (a *Actions) PublishPullRequest(ctx context.Context, push PushOptions, pr PROptions) (url string, number int, created bool, err error) {
	if push.RemoteURL == "" {
		push.RemoteURL = a.Env.RemoteURL()
	}
	if push.Token == "" {
		push.Token = a.Env.Token
	}
	pr.Owner, pr.Repo = cmp.Or(pr.Owner, a.Env.Owner), cmp.Or(pr.Repo, a.Env.Repo)
	return PublishPullRequest(ctx, a.Client, push, pr)
}

// PushBranch pushes the commit of push (see PushBranch) to the
// repository's HTTPS remote with the token unless push.RemoteURL/Token are
// set, and returns the new commit's hash.
func (a *Actions) PushBranch(ctx context.Context, push PushOptions) (string, error) {
	push.RemoteURL = cmp.Or(push.RemoteURL, a.Env.RemoteURL())
	push.Token = cmp.Or(push.Token, a.Env.Token)
	return PushBranch(ctx, push)
}

// SplitList splits an input list on commas, spaces and newlines, dropping
// empty items ("a, b\nc" → [a b c]).
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
}
