package llm_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// caseFile is a *.expect.json of testdata/cases (copied from
// shared/cases/llm-streams and llm-streams-r3, plus cases of the same
// kinds named x*).
type caseFile struct {
	Case string `json:"case"`
	HTTP struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
	} `json:"http"`
	RegisteredTools []string       `json:"registered_tools"`
	Expected        map[string]any `json:"expected"`
}

// TestCases serves every transcript through the real client path (an
// httptest server with the case's status, headers and body) and compares the
// normalised result with the expected block.
func TestCases(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.expect.json"))
	if err != nil || len(files) < 28 {
		t.Fatalf("cases: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".expect.json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var c caseFile
			readJSON(t, f, &c)
			body, err := os.ReadFile(filepath.Join("testdata", "cases", name+".sse"))
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(t, llmtest.Reply{Status: c.HTTP.Status, Header: c.HTTP.Headers, Body: body})
			var tools []llm.ToolDef
			for _, n := range c.RegisteredTools {
				tools = append(tools, llm.ToolDef{Name: n})
			}
			req := llm.Request{Model: "m", Tools: tools}
			var tape bytes.Buffer
			events := collect(t, mustNew(t, llm.Config{BaseURL: srv.URL(),
				HTTPClient: &http.Client{Transport: llm.NewRecorder(&tape, srv.Client().Transport)}}), req)
			checkSequence(t, events)
			compareExpected(t, summarize(events), c.Expected)

			// The recorded exchange replays to the same events.
			cas, err := llm.LoadCassette(&tape)
			if err != nil {
				t.Fatal(err)
			}
			replayed := collect(t, mustNew(t, llm.Config{BaseURL: srv.URL(), // the cassette answers: nothing is contacted
				HTTPClient: &http.Client{Transport: cas.RoundTripper()}}), req)
			if diff := eventsDiff(events, replayed); diff != "" {
				t.Errorf("replay differs (-live +replay):\n%s", diff)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// compareExpected compares the keys the expected block has; optional
// tool-call and usage members are compared only when expected names them.
func compareExpected(t *testing.T, got, want map[string]any) {
	t.Helper()
	for _, k := range []string{"text", "reasoning", "finish_reason", "usage", "error"} {
		w, ok := want[k]
		if !ok {
			continue
		}
		g := got[k]
		if k == "usage" && w != nil && g != nil {
			g = pick(g.(map[string]any), w.(map[string]any))
		}
		if k == "error" && w != nil && g != nil {
			g = errorView(g.(map[string]any), w.(map[string]any))
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	wantCalls, _ := want["tool_calls"].([]any)
	gotCalls, _ := got["tool_calls"].([]any)
	if len(wantCalls) != len(gotCalls) {
		t.Fatalf("tool_calls: want %d, got %d: %v", len(wantCalls), len(gotCalls), gotCalls)
	}
	for i := range wantCalls {
		w, g := wantCalls[i].(map[string]any), gotCalls[i].(map[string]any)
		if _, ok := w["name_as_sent"]; !ok {
			delete(g, "name_as_sent")
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("tool_calls[%d] (-want +got):\n%s", i, diff)
		}
	}
}

func pick(got, want map[string]any) map[string]any {
	out := map[string]any{}
	for k := range want {
		out[k] = got[k]
	}
	return out
}

// errorView reduces the got error to the keys the expected one checks.
func errorView(got, want map[string]any) map[string]any {
	out := map[string]any{"class": got["class"]}
	if mc, ok := want["message_contains"].(string); ok {
		out["message_contains"] = mc
		if !strings.Contains(got["message"].(string), mc) {
			out["message_contains"] = "NOT IN: " + got["message"].(string)
		}
	}
	if _, ok := want["retry_after_seconds"]; ok {
		out["retry_after_seconds"] = got["retry_after_seconds"]
	}
	return out
}

// summarize folds events into the expected block's shape.
func summarize(events []llm.Event) map[string]any {
	var text, reasoning strings.Builder
	out := map[string]any{"tool_calls": []any{}, "usage": nil, "error": nil}
	for _, ev := range events {
		switch ev.Type {
		case llm.EventTextDelta:
			text.WriteString(ev.Delta)
		case llm.EventReasoningDelta:
			reasoning.WriteString(ev.Delta)
		case llm.EventToolCall:
			out["tool_calls"] = append(out["tool_calls"].([]any), callView(ev.ToolCall))
		case llm.EventFinishStep:
			out["finish_reason"] = string(ev.FinishReason)
			if u := ev.Usage; u != nil {
				out["usage"] = map[string]any{
					"prompt_tokens": float64(u.InputTokens), "completion_tokens": float64(u.OutputTokens),
					"total_tokens":         float64(u.InputTokens + u.OutputTokens),
					"cached_prompt_tokens": float64(u.CachedInputTokens), "reasoning_tokens": float64(u.ReasoningTokens),
				}
			}
		case llm.EventError:
			out["finish_reason"] = "error"
			out["tool_calls"] = []any{}
			e := ev.Err.(*llm.Error)
			out["error"] = map[string]any{
				"class": string(e.Class), "message": e.Error(),
				"retry_after_seconds": math.Round(e.RetryAfter.Seconds()*1000) / 1000,
			}
		}
	}
	out["text"] = text.String()
	if reasoning.Len() > 0 {
		out["reasoning"] = reasoning.String()
	}
	return out
}

func callView(tc *llm.ToolCall) map[string]any {
	m := map[string]any{"id": tc.ID, "name": tc.Name, "name_as_sent": tc.NameAsSent, "arguments": nil}
	if !tc.ArgumentsInvalid {
		var v any
		if err := json.Unmarshal(tc.Arguments, &v); err != nil {
			m["arguments"] = "UNPARSABLE: " + string(tc.Arguments)
		} else {
			m["arguments"] = v
		}
	} else {
		m["arguments_raw"] = tc.ArgumentsRaw
		m["arguments_error"] = "invalid-json"
	}
	if len(tc.ProviderMetadata) > 0 {
		var v any
		_ = json.Unmarshal(tc.ProviderMetadata, &v)
		m["provider_metadata"] = v
	}
	return m
}
