package outdir

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

func TestNewRunID(t *testing.T) {
	a, b := NewRunID(time.Date(2026, 11, 30, 2, 23, 0, 0, time.UTC)), NewRunID(time.Now())
	if !regexp.MustCompile(`^20261130T022300Z-[0-9a-f]{8}$`).MatchString(a) || a[17:] == b[17:] {
		t.Fatalf("run ids %q %q", a, b)
	}
}

// TestDefault: the default out dir lies in the runs directory of the
// state directory the permission rules protect.
func TestDefault(t *testing.T) {
	if got := Default("20261130T022300Z-9f3a01bc"); got != filepath.Join(".runner", "runs", "20261130T022300Z-9f3a01bc") {
		t.Errorf("Default = %q", got)
	}
}
