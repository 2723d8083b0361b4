package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// TestFileHoldsSecret: a secret is found wherever it lies in a file
// larger than one window, across a window's end included; a clean file of
// the same size is clean.
func TestFileHoldsSecret(t *testing.T) {
	const secret = "planted-Env-secret-0d9e8f7a"
	red := event.NewRedactor([]string{"SERVICE_TOKEN=" + secret})
	dir := t.TempDir()
	size := 3*secretWindow + 17
	for name, at := range map[string]int{
		"start": 0, "across the first window's end": secretWindow - 5, "in an overlap": 2*secretWindow - secretOverlap - 3,
		"end": size - len(secret), "none": -1,
	} {
		data := bytes.Repeat([]byte{0, 'x'}, size/2+1)[:size]
		if at >= 0 {
			copy(data[at:], secret)
		}
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := fileHoldsSecret(p, red)
		if err != nil || got != (at >= 0) {
			t.Errorf("%s: %v, %v; want %v", name, got, err, at >= 0)
		}
	}
}
