package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/runner/event"
)

// ExecCmd is `runner exec TASK.yaml`. Its flags are a contract (scripts,
// the GitHub Action and tests rely on them): keep the names.
type ExecCmd struct {
	Task     string        `arg:"" name:"TASK.yaml" help:"Task spec file (- for stdin)."`
	Repo     string        `help:"Work tree to run in (default ${default})." default:"." placeholder:"DIR"`
	Model    string        `help:"Model name; overrides the spec's model." env:"RUNNER_MODEL" placeholder:"NAME"`
	BaseURL  string        `name:"base-url" help:"OpenAI-compatible base URL, /chat/completions is appended: e.g. http://localhost:11434/v1 (default https://api.openai.com/v1); the API key comes from $$OPENAI_API_KEY only." env:"OPENAI_BASE_URL" placeholder:"URL"`
	Wire     string        `help:"The API spoken: chat (Chat Completions), responses (OpenAI Responses) or anthropic (Anthropic Messages, key from $$ANTHROPIC_API_KEY); overrides the spec's provider.wire (default: chosen from the endpoint and the model)." enum:",chat,responses,anthropic" default:"" placeholder:"WIRE"`
	Set      []string      `help:"Task input KEY=VALUE; repeatable." placeholder:"KEY=VALUE" sep:"none"`
	Out      string        `help:"Directory for events.jsonl, changes.patch, summary.md and result.json (default .runner/runs/<run id>)." placeholder:"DIR"`
	Events   string        `help:"Write the JSONL event log to FILE instead (- for stdout)." placeholder:"FILE"`
	Patch    string        `help:"Write the patch to FILE instead." placeholder:"FILE"`
	MaxSteps int           `name:"max-steps" help:"Override limits.max_steps (0 or omitted: the spec's)." placeholder:"N"`
	Timeout  time.Duration `help:"Override limits.timeout, e.g. 20m (0 or omitted: the spec's)." placeholder:"DURATION"`
	Isolate  bool          `help:"Work on a temporary copy of --repo and leave it untouched; the patch is the output."`
	Record   string        `help:"Record the model session to a cassette FILE." placeholder:"FILE" xor:"cassette"`
	Replay   string        `help:"Answer model calls from a cassette FILE, with no network." placeholder:"FILE" xor:"cassette"`
	Quiet    bool          `help:"Print no progress on stderr."`

	Continue   string `help:"Continue the conversation of the run in DIR (its out dir; last: the newest finished run under .runner/runs), against the work tree as that run left it." placeholder:"DIR"`
	Prompt     string `help:"The user message for this run, instead of the spec's prompt (with --continue: the next message)." placeholder:"TEXT" xor:"prompt"`
	PromptFile string `name:"prompt-file" help:"Read the user message from FILE (- for stdin)." placeholder:"FILE" xor:"prompt" type:"path"`
	Force      bool   `help:"With --continue: go on even when the spec changed, the work tree diverged or the run's base tree is gone."`
	PR         int    `name:"pr" help:"Under GitHub Actions: the pull request the run is about (review mode reviews it, the comment goes on it), for an event that names none." env:"RUNNER_PR" placeholder:"N"`
}

// Run builds the exec options and runs the task.
func (c *ExecCmd) Run(ctx context.Context, streams Streams, env Environ, log *slog.Logger, color event.ColorMode) error {
	inputs, err := pipeline.ParseInputs(c.Set)
	if err != nil {
		return err
	}
	if err := oneStdin(c.Task, c.PromptFile); err != nil {
		return err
	}
	if err := notASpec(c.Task); err != nil {
		return err
	}
	task, taskData := c.Task, []byte(nil)
	if c.Task == "-" {
		if taskData, err = readStdin(streams, "TASK.yaml"); err != nil {
			return err
		}
		task = stdinName
	}
	prompt, err := c.prompt(streams)
	if err != nil {
		return err
	}
	tel, log, stop := startTelemetry(ctx, env, log)
	defer stop()
	_, err = pipeline.Exec(ctx, pipeline.ExecOptions{
		Telemetry: tel,
		Logger:    log,
		Task:      task,
		TaskData:  taskData,
		Repo:      c.Repo,
		Model:     c.Model,
		BaseURL:   c.BaseURL,
		Wire:      c.Wire,
		Inputs:    inputs,
		Out:       c.Out,
		Events:    c.Events,
		Patch:     c.Patch,
		MaxSteps:  c.MaxSteps,
		Timeout:   c.Timeout,
		Isolate:   c.Isolate,
		Record:    c.Record,
		Replay:    c.Replay,
		Quiet:     c.Quiet,
		Color:     color,
		Continue:  c.Continue,
		Prompt:    prompt,
		Force:     c.Force,
		PR:        c.PR,
		APIKey:    env.Get("OPENAI_API_KEY"),
		Environ:   env,
		Stdout:    streams.Stdout,
		Stderr:    streams.Stderr,
	})
	return err
}

// prompt is the --prompt text or the --prompt-file contents ("" for none).
func (c *ExecCmd) prompt(streams Streams) (string, error) {
	if c.PromptFile == "" {
		return c.Prompt, nil
	}
	var data []byte
	var err error
	if c.PromptFile == "-" {
		data, err = io.ReadAll(streams.Stdin)
	} else {
		data, err = os.ReadFile(c.PromptFile)
	}
	if err != nil {
		return "", fmt.Errorf("%w: --prompt-file: %w", pipeline.ErrUsage, err)
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", fmt.Errorf("%w: --prompt-file %s is empty: give the message the agent should work on", pipeline.ErrUsage, c.PromptFile)
	}
	return string(data), nil
}
