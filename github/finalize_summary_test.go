package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFinalizeWritesTheSummaryOnce: finalize (the action's step after a
// failed or cancelled run) adds the run's report to the step summary when
// the run was killed before writing it, once however often it runs, not
// when the run wrote it; a missing log still leaves the summary a line.
func TestFinalizeWritesTheSummaryOnce(t *testing.T) {
	events := writeEvents(t, startedLine, `{"v":1,"seq":2,"type":"te`) // killed: no run.finished
	summary := filepath.Join(t.TempDir(), "summary")
	for range 2 {
		if _, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, SummaryPath: summary}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(summary)
	if n := strings.Count(string(got), SummaryMarker("r")); n != 1 || !strings.Contains(string(got), "cancelled") {
		t.Errorf("summary holds the report %d times, want once, saying cancelled:\n%s", n, got)
	}

	written := filepath.Join(t.TempDir(), "summary")
	if err := os.WriteFile(written, []byte(SummaryMarker("r")+"the run's own report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Finalize(t.Context(), FinalizeOptions{EventsFile: events, SummaryPath: written}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(written); string(got) != SummaryMarker("r")+"the run's own report\n" {
		t.Errorf("finalize added to a summary the run wrote:\n%s", got)
	}

	missing := filepath.Join(t.TempDir(), "summary")
	if _, err := Finalize(t.Context(), FinalizeOptions{EventsFile: filepath.Join(t.TempDir(), "none"), SummaryPath: missing}); err == nil {
		t.Error("finalize of a missing log succeeded")
	}
	if got, _ := os.ReadFile(missing); !strings.Contains(string(got), "runner: no report") {
		t.Errorf("summary after a missing log:\n%s", got)
	}
}
