package github

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/seed43ef5acb/runner/internal/httpguard"
)

// Default endpoints of github.com, used when the variables are unset.
const (
	DefaultServerURL = "https://github.com"
	DefaultAPIURL    = "https://api.github.com"
)

// Env is the GitHub Actions environment of a step, read from an environ map
// by LoadEnv. Fields hold the raw values; Owner and Repo are split from
// GITHUB_REPOSITORY.
type Env struct {
	Actions     bool   // GITHUB_ACTIONS == "true"
	EventName   string // GITHUB_EVENT_NAME
	EventPath   string // GITHUB_EVENT_PATH
	Repository  string // GITHUB_REPOSITORY, "owner/repo"
	Owner       string
	Repo        string
	SHA         string // GITHUB_SHA
	Ref         string // GITHUB_REF
	HeadRef     string // GITHUB_HEAD_REF (pull_request events only)
	BaseRef     string // GITHUB_BASE_REF (pull_request events only)
	Actor       string // GITHUB_ACTOR
	RunID       string // GITHUB_RUN_ID
	RunAttempt  int    // GITHUB_RUN_ATTEMPT (0 when unset)
	ServerURL   string // GITHUB_SERVER_URL, no trailing slash
	APIURL      string // GITHUB_API_URL, no trailing slash
	Workspace   string // GITHUB_WORKSPACE
	Output      string // GITHUB_OUTPUT file
	StepSummary string // GITHUB_STEP_SUMMARY file
	Token       string // GITHUB_TOKEN, else GH_TOKEN
}

// LoadEnv reads the Actions variables from environ (for example built from
// os.Environ in cmd). Outside Actions (GITHUB_ACTIONS unset) it still returns
// what is there, with Actions false. It fails with ErrEnv when
// GITHUB_REPOSITORY is not "owner/repo", a URL does not parse, or, inside
// Actions, GITHUB_EVENT_NAME is missing.
func LoadEnv(environ map[string]string) (*Env, error) {
	e := &Env{
		Actions:     environ["GITHUB_ACTIONS"] == "true",
		EventName:   environ["GITHUB_EVENT_NAME"],
		EventPath:   environ["GITHUB_EVENT_PATH"],
		Repository:  environ["GITHUB_REPOSITORY"],
		SHA:         environ["GITHUB_SHA"],
		Ref:         environ["GITHUB_REF"],
		HeadRef:     environ["GITHUB_HEAD_REF"],
		BaseRef:     environ["GITHUB_BASE_REF"],
		Actor:       environ["GITHUB_ACTOR"],
		RunID:       environ["GITHUB_RUN_ID"],
		Workspace:   environ["GITHUB_WORKSPACE"],
		Output:      environ["GITHUB_OUTPUT"],
		StepSummary: environ["GITHUB_STEP_SUMMARY"],
		Token:       cmp.Or(environ["GITHUB_TOKEN"], environ["GH_TOKEN"]),
	}
	var err error
	if e.ServerURL, err = envURL(environ, "GITHUB_SERVER_URL", DefaultServerURL); err != nil {
		return nil, err
	}
	if e.APIURL, err = envURL(environ, "GITHUB_API_URL", DefaultAPIURL); err != nil {
		return nil, err
	}
	if e.Repository != "" {
		owner, repo, ok := strings.Cut(e.Repository, "/")
		if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
			return nil, fmt.Errorf("%w: GITHUB_REPOSITORY %q is not owner/repo", ErrEnv, e.Repository)
		}
		e.Owner, e.Repo = owner, repo
	}
	if a := environ["GITHUB_RUN_ATTEMPT"]; a != "" {
		if e.RunAttempt, err = strconv.Atoi(a); err != nil {
			return nil, fmt.Errorf("%w: GITHUB_RUN_ATTEMPT %q: %w", ErrEnv, a, err)
		}
	}
	if e.Actions && e.EventName == "" {
		return nil, fmt.Errorf("%w: GITHUB_EVENT_NAME is not set", ErrEnv)
	}
	return e, nil
}

func envURL(environ map[string]string, name, def string) (string, error) {
	v := environ[name]
	if v == "" {
		return def, nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("%w: %s %q is not an http(s) URL", ErrEnv, name, v)
	}
	return strings.TrimRight(v, "/"), nil
}

// RunURL is the link to the workflow run,
// SERVER/OWNER/REPO/actions/runs/RUN_ID, or "" when a part is unknown.
func (e *Env) RunURL() string {
	if e.Repository == "" || e.RunID == "" {
		return ""
	}
	return e.ServerURL + "/" + e.Repository + "/actions/runs/" + e.RunID
}

// Enterprise reports whether the API is not github.com's (GHES or a proxy).
func (e *Env) Enterprise() bool { return e.APIURL != DefaultAPIURL }

// RemoteURL is the HTTPS clone URL of the repository on the server.
func (e *Env) RemoteURL() string {
	return e.ServerURL + "/" + e.Repository + ".git"
}

// NewClient returns a go-github client for the environment: authenticated
// with the token (when set) and pointed at GITHUB_API_URL when it is not
// github.com. For GHES the upload URL is derived from GITHUB_SERVER_URL
// (SERVER/api/uploads/), not from the API URL. httpClient may be nil.
//
// The token goes to the API's origin (and the upload URL's) only: not
// after a redirect elsewhere (go-github's WithAuthToken adds it to every
// request, the redirected ones too).
//
// Every body and title it sends passes NeutralizeMarkdown (OwnHosts).
func NewClient(e *Env, httpClient *http.Client) (*gh.Client, error) {
	c, _, err := newClient(e, httpClient)
	return c, err
}

func newClient(e *Env, httpClient *http.Client) (*gh.Client, *outbound, error) {
	hc := httpguard.Client(httpClient)
	if e.Token != "" {
		api := cmp.Or(e.APIURL, DefaultAPIURL)
		hc.Transport = &httpguard.HeaderTransport{Base: hc.Transport,
			Origins: []string{httpguard.OriginOf(api), httpguard.OriginOf(e.ServerURL), httpguard.OriginOf("https://uploads.github.com")},
			Headers: http.Header{"Authorization": {"Bearer " + e.Token}}}
	}
	out := &outbound{base: cmp.Or[http.RoundTripper](hc.Transport, http.DefaultTransport), allowed: OwnHosts(e)}
	hc.Transport = out
	c := gh.NewClient(hc)
	if !e.Enterprise() {
		return c, out, nil
	}
	c, err := c.WithEnterpriseURLs(e.APIURL, e.ServerURL+"/api/uploads/")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: enterprise URLs: %w", ErrEnv, err)
	}
	return c, out, nil
}
