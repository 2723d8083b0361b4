package github

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	gh "github.com/google/go-github/v60/github"
)

// call is a kind of GitHub write whose refusal has its own fix.
type call int

const (
	callPush call = iota
	callPullRequest
	callLabels
)

// allowPRSetting is the repository (or organization) setting without
// which a workflow's token may not open pull requests.
const allowPRSetting = `Settings → Actions → General → Workflow permissions → "Allow GitHub Actions to create and approve pull requests"`

// permissionHint says which workflow permission or repository setting
// fixes err, a refusal (403) of c; "" when err is not one.
func permissionHint(c call, err error) string {
	var re *gh.ErrorResponse
	refused := errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusForbidden
	msg := ""
	if refused {
		msg = strings.ToLower(re.Message)
	}
	if c == callPush && (errors.Is(err, transport.ErrAuthorizationFailed) || errors.Is(err, transport.ErrAuthenticationRequired) ||
		strings.Contains(err.Error(), "403") || strings.Contains(strings.ToLower(err.Error()), "permission to")) {
		return "give the job `permissions: contents: write` so its token may push the branch"
	}
	if !refused {
		return ""
	}
	switch {
	case strings.Contains(msg, "not permitted to create or approve pull requests"):
		return "turn on the repository setting " + allowPRSetting + " (for an organization, its setting of the same name too)"
	case c == callPullRequest:
		return "give the job `permissions: pull-requests: write` (and `contents: write` for the branch); if it has them, turn on " + allowPRSetting
	case c == callLabels:
		return "give the job `permissions: pull-requests: write` (labels are written through the issues API: `issues: write` works too)"
	}
	return ""
}

// withPermissionHint adds permissionHint's fix to err's text, keeping what
// it wraps.
func withPermissionHint(c call, err error) error {
	if h := permissionHint(c, err); h != "" {
		return fmt.Errorf("%w; to fix: %s", err, h)
	}
	return err
}
