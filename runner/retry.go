package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// waitRetry counts a retryable failure and, while attempts remain, emits a
// retry event and waits out the backoff; an error means give up (attempts
// exhausted, or the context ended while waiting).
func (s *Session) waitRetry(ctx context.Context, le *llm.Error) error {
	s.failures++
	attempts := s.cfg.Backoff.Attempts
	if le.Unreachable {
		attempts = min(attempts, 1) // waiting will not make it reachable
	}
	if s.failures > attempts {
		if attempts == 1 {
			return fmt.Errorf("gave up after 1 retry: %w", le)
		}
		return fmt.Errorf("gave up after %d retries: %w", attempts, le)
	}
	delay := s.retryDelay(le)
	s.emit(event.Retry{
		Step:        s.step,
		Attempt:     s.failures,
		ErrorClass:  event.ErrorClass(le.Class),
		Error:       le.Error(),
		DelayMS:     delay.Milliseconds(),
		MaxAttempts: attempts,
	})
	s.cfg.Logger.Info("retrying model call", "step", s.step, "attempt", s.failures, "delay", delay, "err", le)
	return sleep(ctx, delay)
}

// retryDelay is the next exponential backoff delay with jitter, or the
// server's Retry-After when longer, capped at Backoff.Max. A request the
// provider already changed (le.Resend) goes again at once.
func (s *Session) retryDelay(le *llm.Error) time.Duration {
	if le.Resend {
		return 0
	}
	d := s.backoff.NextBackOff()
	if le.RetryAfter > d {
		d = le.RetryAfter
	}
	return min(d, s.cfg.Backoff.Max)
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timer.C:
		return nil
	}
}
