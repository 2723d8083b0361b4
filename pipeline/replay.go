package pipeline

import (
	"encoding/json"
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

// warnReplayPrompt warns once on Stderr (not with --quiet) when the
// cassette was recorded for another prompt than this run's: the replay
// goes on, but its answers were meant for another task.
func (r *execRun) warnReplayPrompt() {
	if r.opts.Replay == "" || r.opts.Quiet || r.replayPrompt == "" {
		return
	}
	if strings.TrimSpace(r.replayPrompt) == strings.TrimSpace(r.prompt) {
		return
	}
	fmt.Fprintf(r.opts.Stderr, "runner: warning: %s was recorded for a different prompt; replay continues\n",
		r.opts.Replay)
}

// recordedPrompt is the last user message of the cassette's first request
// ("" when there is none or it cannot be read).
func recordedPrompt(c *llm.Cassette) string {
	if c == nil || len(c.Exchanges) == 0 {
		return ""
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(c.Exchanges[0].Request.Body, &body) != nil {
		return ""
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
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
