package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

const outSchema = `{"type":"object","properties":{"fixed":{"type":"boolean"},"files":{"type":"array","items":{"type":"string"}}},"required":["fixed"],"additionalProperties":false}`

func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	so := func(id, args string) script {
		return sc(call(id, StructuredOutputTool, args), finish(llm.FinishToolCalls, 10, 1))
	}
	for _, tc := range []struct {
		name    string
		scripts []script
		status  event.Status
		output  string
		steps   int
	}{
		{name: "valid", scripts: []script{so("c1", `{"fixed":true,"files":["a.go"]}`)},
			status: event.StatusSuccess, output: `{"fixed":true,"files":["a.go"]}`, steps: 1},
		{name: "invalid then valid", scripts: []script{so("c1", `{"fixed":"yes"}`), so("c2", `{"fixed":false}`)},
			status: event.StatusSuccess, output: `{"fixed":false}`, steps: 2},
		{name: "invalid three times", scripts: []script{so("c1", `{"fixed":"yes"}`), so("c2", `{"fixed":1`),
			so("c3", `{"other":1}`), so("c4", `{"fixed":true}`)}, status: event.StatusFailed, steps: 3},
		{name: "text instead of the tool", scripts: []script{sc(text("done!"), finish(llm.FinishStop, 10, 1)),
			so("c1", `{"fixed":true}`)}, status: event.StatusSuccess, output: `{"fixed":true}`, steps: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newModel(tc.scripts...)
			cfg := testConfig(m, &recSink{}, &fakeTool{name: "read"})
			cfg.OutputSchema = json.RawMessage(outSchema)
			res := runTest(t, cfg)
			if res.Status != tc.status || string(res.StructuredOutput) != tc.output || res.Steps != tc.steps {
				t.Fatalf("result %+v (output %s)", res, res.StructuredOutput)
			}
			req := m.reqs()[0]
			if req.ToolChoice != llm.ToolChoiceRequired || req.Tools[0].Name != StructuredOutputTool ||
				string(req.Tools[0].Parameters) != outSchema {
				t.Errorf("request tools %+v choice %q", req.Tools, req.ToolChoice)
			}
			if tc.steps > 1 {
				msgs := m.reqs()[1].Messages
				if last := msgs[len(msgs)-1].Content; !strings.Contains(last, "StructuredOutput") {
					t.Errorf("the model was not told why: %q", last)
				}
			}
		})
	}
}
