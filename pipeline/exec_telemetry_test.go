package pipeline

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/internal/telemetry"
	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestExecTelemetry runs a task with the OTLP exporters pointed at an
// in-process receiver: the run's spans arrive in the GenAI conventions,
// and every model request names its chat span in traceparent and says
// User-Agent runner/<version>.
func TestExecTelemetry(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	tel, err := telemetry.Setup(t.Context(), os.Getenv, Version())
	if err != nil || tel == nil {
		t.Fatalf("Setup = %v, %v", tel, err)
	}
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\techo built\n"})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	run := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()},
		opts: func(o *ExecOptions) { o.Telemetry = tel }}.exec(t)
	if run.err != nil {
		t.Fatal(run.err)
	}
	srv := run.srv
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	chats := map[string]bool{}
	for _, s := range rcv.Spans() {
		count[s.GetName()]++
		attrs := otlptest.Attrs(s.GetAttributes())
		switch s.GetName() {
		case "chat gpt-4.1-mini":
			chats[hex.EncodeToString(s.GetTraceId())+"-"+hex.EncodeToString(s.GetSpanId())] = true
		case "execute_tool bash":
			if attrs["gen_ai.tool.call.id"] == "" || attrs["process.exit.code"] != "0" || attrs["runner.permission.verdict"] != "allowed" {
				t.Errorf("execute_tool bash attributes: %v", attrs)
			}
		case "invoke_agent gates":
			if attrs["runner.status"] != "success" || attrs["gen_ai.conversation.id"] == "" {
				t.Errorf("invoke_agent attributes: %v", attrs)
			}
		}
	}
	if count["invoke_agent gates"] != 1 || count["chat gpt-4.1-mini"] != 2 || count["execute_tool bash"] != 1 {
		t.Fatalf("spans %v, want one invoke_agent, two chat, one execute_tool", count)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	for i, r := range reqs {
		if ua := r.Header.Get("User-Agent"); ua != "runner/"+Version() {
			t.Errorf("request %d: User-Agent %q", i, ua)
		}
		parts := strings.Split(r.Header.Get("Traceparent"), "-")
		if len(parts) != 4 || !chats[parts[1]+"-"+parts[2]] {
			t.Errorf("request %d: traceparent %q names no chat span (%v)", i, r.Header.Get("Traceparent"), chats)
		}
	}
}
