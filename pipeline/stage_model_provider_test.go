package pipeline

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestExecProviderSection: the spec's provider section reaches the wire.
// A Mistral model behind an endpoint whose URL says nothing (a local
// gateway) gets OpenAI-style tool-call ids, which Mistral rejects; with
// provider.profile: mistral the runner sends 9-character ids and the run
// succeeds.
func TestExecProviderSection(t *testing.T) {
	for _, tc := range []struct {
		name, section string
		want          event.Status
	}{
		{"without the section", "", event.StatusError},
		{"with profile mistral", "provider:\n  profile: mistral\n", event.StatusSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, repo := execFixture(t)
			mustWrite(t, spec, strings.Replace(runSpec, "model: gpt-4.1-mini\n", "model: local-model\n"+tc.section, 1))
			srv := llmtest.NewPersonalityServer(t, llmtest.Mistral(), writeTurn(), llmtest.Turn{Text: "Done."}.Reply())
			res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "out"),
				BaseURL: srv.URL(), APIKey: "sk-unit-0123456789abcdef", Stdout: &bytes.Buffer{}})
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s (err %v, rejections %v)", res.Status, tc.want, err, srv.Rejections())
			}
			if tc.want == event.StatusSuccess && err != nil {
				t.Fatal(err)
			}
			if tc.want == event.StatusError && (err == nil || !strings.Contains(err.Error(), "Tool call id was call_1")) {
				t.Errorf("error %v does not carry Mistral's message", err)
			}
		})
	}
}
