package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/llm"
)

// endpoint is the base_url run.started records: "replay:<cassette>" when
// the cassette answers every model call (no endpoint is contacted), else
// the endpoint.
func (r *execRun) endpoint() string {
	if r.opts.Replay != "" {
		return "replay:" + r.opts.Replay
	}
	return r.baseURL
}

// checkReplay refuses a --replay cassette recorded for another task (setup
// stage "replay", once the prompt is final): the prompt this run sends
// first must be the last user message of the cassette's first request.
// Replaying a foreign cassette would answer this task with another's
// tool calls (the roles of the messages alone match any task), so it is a
// usage error (exit 2) that names both prompts. A cassette whose first
// request has no user message (a hand-written one) is not checked.
func (r *execRun) checkReplay(context.Context) error {
	if r.opts.Replay == "" || r.replayPrompt == "" {
		return nil
	}
	want := strings.TrimSpace(cmp.Or(r.opts.Prompt, r.prompt))
	if strings.TrimSpace(r.replayPrompt) == want {
		return nil
	}
	return fmt.Errorf("%w: --replay %s was recorded for another task: its first request asks %q, this run's prompt is %q; "+
		"replay the cassette recorded for this task and inputs, or record a new one with --record FILE",
		ErrUsage, r.opts.Replay, clip(r.replayPrompt, 120), clip(want, 120))
}

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// cassetteMisfit reports whether a run's model error is a cassette that
// does not fit the run (a call it did not record, or more calls than it
// holds): an input problem, exit 2, not the provider's.
func cassetteMisfit(err error) bool {
	return errors.Is(err, llm.ErrCassetteMismatch) || errors.Is(err, llm.ErrCassetteExhausted)
}

// recordedPrompt is the last user message of the cassette's first request
// ("" when there is none or it cannot be read).
func recordedPrompt(c *llm.Cassette) string {
	if c == nil || len(c.Exchanges) == 0 {
		return ""
	}
	type message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	var body struct {
		Messages []message `json:"messages"`
		Input    []message `json:"input"` // the Responses API
	}
	if json.Unmarshal(c.Exchanges[0].Request.Body, &body) != nil {
		return ""
	}
	if body.Messages == nil {
		body.Messages = body.Input
	}
	for i := len(body.Messages) - 1; i >= 0; i-- {
		if m := body.Messages[i]; m.Role == "user" {
			return contentText(m.Content)
		}
	}
	return ""
}

// contentText is the text of a message content: a string, or the text
// parts of an array of parts, joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
