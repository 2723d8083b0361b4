package batch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/pipeline"
)

// TestRunClaudeBatchWithoutOpenAIKey: a batch whose task runs a Claude
// model with only ANTHROPIC_API_KEY set runs on the anthropic wire; it
// used to be refused before starting for want of OPENAI_API_KEY. With no
// key at all it is refused before anything is cloned, naming
// ANTHROPIC_API_KEY, the key its wire needs.
func TestRunClaudeBatchWithoutOpenAIKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := makeBatch(t, dir, 1, "")
	write(t, filepath.Join(dir, "task.yaml"), strings.ReplaceAll(strings.ReplaceAll(noteTask, "who", "name"),
		"model: gpt-4.1-mini", "model: claude-sonnet-4-5"))
	srv := llmtest.NewAnthropicServer(t,
		llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"NOTE.md","content":"note\n"}`)}}},
		llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{Text: "Wrote NOTE.md."}})
	run := func(out string, environ ...string) (Summary, error) {
		return Run(t.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: filepath.Join(dir, "cache-"+filepath.Base(out)),
			RetryBackoff: time.Millisecond, Executor: &PipelineExecutor{Environ: append([]string{"PATH=" + os.Getenv("PATH")}, environ...)}})
	}

	_, err := run(filepath.Join(dir, "nokey"))
	if pipeline.ExitCode(err) != pipeline.ExitUsage || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY is not set") {
		t.Errorf("no key: err = %v, want exit 2 naming ANTHROPIC_API_KEY (exit %d)", err, pipeline.ExitCode(err))
	}
	if _, err := os.Stat(filepath.Join(dir, "cache-nokey")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no key: the clone cache exists (err %v): a repository was cloned", err)
	}

	sum, err := run(filepath.Join(dir, "out"), "ANTHROPIC_API_KEY=sk-ant-test-0123456789", "ANTHROPIC_BASE_URL="+srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts[StatusSuccess] != 1 || len(srv.Requests()) != 2 {
		t.Errorf("counts = %v after %d Messages requests, want 1 success after 2: %+v", sum.Counts, len(srv.Requests()), sum.Results)
	}
}
