package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/golden"

	"github.com/seed43ef5acb/runner/llm"
)

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		files  map[string]string
		schema string
	}{
		{name: "agents", files: map[string]string{"AGENTS.md": "Run go test.\n", "CLAUDE.md": "ignored"}},
		{name: "claude", files: map[string]string{"CLAUDE.md": "Use tabs.\n"}, schema: outSchema},
		{name: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			m := newModel()
			cfg := testConfig(m, nil, &fakeTool{name: "read"})
			cfg.WorkTree = dir
			cfg.Instructions = "Keep changes minimal."
			cfg.OutputSchema = json.RawMessage(tc.schema)
			runTest(t, cfg)
			got := strings.ReplaceAll(m.reqs()[0].Messages[0].Content, dir, "/WORKTREE")
			golden.Check(t, filepath.Join("testdata", "system_"+tc.name+".golden"), []byte(got))
		})
	}
}

func TestSystemPromptDateFixedAtStart(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 1, 31, 23, 59, 0, 0, time.UTC)
	clock := day
	m := newModel(sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 1, 1)))
	cfg := testConfig(m, nil, &fakeTool{name: "read"})
	cfg.Now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	runTest(t, cfg)
	reqs := m.reqs()
	if reqs[0].Messages[0].Content != reqs[1].Messages[0].Content ||
		!strings.Contains(reqs[0].Messages[0].Content, "2026-02-01") {
		t.Errorf("system prompt changed across steps or wrong date:\n%s", reqs[1].Messages[0].Content)
	}
}
