package event

import (
	"strings"
	"sync"
	"testing"
)

// TestRedactorAdd: a value added during the run is redacted from then on,
// with its URL password alone; the literal redactor leaves token shapes
// alone; a URL-shaped environment value (DATABASE_URL, not a secret
// name) is redacted by its password too; Add is safe alongside Redact.
func TestRedactorAdd(t *testing.T) {
	r := NewRedactor([]string{"DATABASE_URL=postgres://app:env-pass-0042@db/app", "HOME=/home/u"})
	if got := r.Redact("password is env-pass-0042"); got != "password is "+Redacted {
		t.Errorf("the environment URL's password alone: %q", got)
	}
	if got := r.Redact("late-secret-1234"); got != "late-secret-1234" {
		t.Fatalf("redacted before it was added: %q", got)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				_ = r.Redact("x late-secret-1234 y")
			}
		})
	}
	if !r.Add("late-secret-1234", "redis://:late-pass-9876@cache:6379") || r.Add("late-secret-1234") {
		t.Error("Add reported new values wrongly")
	}
	wg.Wait()
	for in, want := range map[string]string{
		"x late-secret-1234 y":  "x " + Redacted + " y",
		"pw=late-pass-9876":     "pw=" + Redacted,
		"/home/u stays visible": "/home/u stays visible",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	lit := NewLiteralRedactor(nil, "known-value-777")
	fixture := "token ghp_abcdefghijklmnopqrstuvwxyz0123 in a fixture"
	if got := lit.Redact(fixture + " known-value-777"); got != fixture+" "+Redacted {
		t.Errorf("literal redactor: %q", got)
	}
	var nilR *Redactor
	if nilR.Add("x-value-12345") || !strings.Contains(nilR.Redact("x-value-12345"), "x-value") {
		t.Error("a nil Redactor must do nothing")
	}
}
