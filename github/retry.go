package github

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v5"
	gh "github.com/google/go-github/v60/github"
)

// apiTries is how often an idempotent API operation is tried in all.
const apiTries = 3

// retryAPI runs op, an idempotent operation (it finds before it creates),
// up to apiTries times while it fails transiently: a 5xx answer, a
// secondary rate limit (honouring its Retry-After) or a network error.
// b is the pause between tries (nil: exponential from 1s).
func retryAPI[T any](ctx context.Context, b backoff.BackOff, op func() (T, error)) (T, error) {
	if b == nil {
		e := backoff.NewExponentialBackOff()
		e.InitialInterval = time.Second
		b = e
	}
	return backoff.Retry(ctx, func() (T, error) {
		v, err := op()
		if err == nil {
			return v, nil
		}
		var abuse *gh.AbuseRateLimitError
		if errors.As(err, &abuse) && abuse.RetryAfter != nil {
			return v, fmt.Errorf("%w%w", err, &backoff.RetryAfterError{Duration: *abuse.RetryAfter})
		}
		if !transient(err) {
			return v, backoff.Permanent(err)
		}
		return v, err
	}, backoff.WithBackOff(b), backoff.WithMaxTries(apiTries))
}

// transient reports whether an API error may go away when tried again.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return true
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode >= http.StatusInternalServerError
	}
	var ne net.Error
	return errors.As(err, &ne)
}
