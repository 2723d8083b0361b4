package github

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseOutputs reads a GITHUB_OUTPUT file the way the Actions runner does
// (name=value lines and name<<DELIM heredocs).
func parseOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			if i == len(lines) {
				t.Fatalf("matching delimiter %q not found", delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("invalid format %q", line)
		}
		out[name] = val
	}
	return out
}

func TestWriteOutputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "output")
	if err := os.WriteFile(path, []byte("earlier=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tricky := "## Report\nline2\nghadelimiter_\n<<EOF\nname=value"
	if err := WriteOutputs(path, Output{"status", "success"}, Output{"report", tricky}, Output{"empty", ""}); err != nil {
		t.Fatal(err)
	}
	got := parseOutputs(t, path)
	want := map[string]string{"earlier": "1", "status": "success", "report": tricky, "empty": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	data, _ := os.ReadFile(path)
	delims := regexp.MustCompile(`<<(ghadelimiter_[0-9a-f]{32})\n`).FindAllStringSubmatch(string(data), -1)
	if len(delims) != 3 || delims[0][1] == delims[1][1] {
		t.Errorf("delimiters not random per pair: %v", delims)
	}
}

func TestWriteOutputsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Output{{"", "v"}, {"a\nb", "v"}, {"a=b", "v"}} {
		if err := WriteOutputs(filepath.Join(dir, "o"), o); !errors.Is(err, ErrFileCommand) {
			t.Errorf("%q: err = %v", o.Name, err)
		}
	}
	if err := WriteOutputs("", Output{"a", "b"}); !errors.Is(err, ErrFileCommand) {
		t.Errorf("empty path: %v", err)
	}
}

func TestDelimiterAvoidsValue(t *testing.T) {
	d, err := delimiterFor("x")
	if err != nil || !strings.HasPrefix(d, "ghadelimiter_") {
		t.Fatalf("d=%q err=%v", d, err)
	}
}

func TestAppendSummaryFitsLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary")
	if err := AppendSummary(path, "# first\n"); err != nil {
		t.Fatal(err)
	}
	big := "```diff\n" + strings.Repeat("+ añadir línea ✓\n", SummaryLimit/10)
	if err := AppendSummary(path, big); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	s := string(data)
	if len(s) > SummaryLimit || len(s) < SummaryLimit-200 {
		t.Errorf("size %d, want just under %d", len(s), SummaryLimit)
	}
	if !strings.HasPrefix(s, "# first\n```diff\n+ añadir") || !strings.HasSuffix(s, summaryCutNotice) {
		t.Errorf("start or notice missing: %q … %q", s[:40], s[len(s)-80:])
	}
	if !utf8.ValidString(s) || !strings.Contains(s, "✓\n```"+summaryCutNotice) {
		t.Errorf("not cut on a line with the fence closed: %q", s[len(s)-200:])
	}
	// A full summary takes nothing more rather than going over the limit.
	if err := AppendSummary(path, "more"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Size() != int64(len(s)) {
		t.Errorf("size grew to %d", fi.Size())
	}
}

func TestFitBytesSmall(t *testing.T) {
	if got := FitBytes("short", 10, "!"); got != "short" {
		t.Errorf("got %q", got)
	}
	if got := FitBytes("line one\nline two\n", 14, "[cut]"); got != "line one[cut]" {
		t.Errorf("got %q", got)
	}
}
