package spec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

func TestProviderSection(t *testing.T) {
	t.Parallel()
	base := "version: 1\nname: t\nprompt: p\n"
	for _, tc := range []struct{ yaml, wantErr string }{
		{"provider: {profile: mistrall}", `provider.profile: unknown value "mistrall"`},
		{"provider: {tool_call_ids: uuid}", `provider.tool_call_ids: unknown value "uuid"`},
		{"provider: {schema: openapi}", `provider.schema: unknown value "openapi"`},
		{"provider: {cache_control: yes please}", "provider.cache_control: expected true or false"},
		{"provider: {stor: false}", `unknown key "stor"`},
		{"provider: mistral", "provider: expected a mapping"},
	} {
		_, err := LoadBytes("task.yaml", []byte(base+tc.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "task.yaml:4:") {
			t.Errorf("%s: error %v, want %q at line 4", tc.yaml, err, tc.wantErr)
		}
	}
}

func TestProviderRequestProfile(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	if p := (Provider{}).RequestProfile("https://api.mistral.ai/v1", "mistral-large"); p != nil {
		t.Errorf("an empty section must leave the choice to the provider, got %+v", p)
	}
	// A LiteLLM proxy whose URL says nothing, in front of Claude.
	p := Provider{CacheControl: &yes}.RequestProfile("http://10.0.0.7:4000/v1", "claude-sonnet-4-5")
	if !p.CacheControl || p.ToolCallIDs != llm.IDsAnthropic || !p.NoEmptyContent {
		t.Errorf("cache_control on the chosen profile: %+v", p)
	}
	p = Provider{Profile: "mistral", ToolCallIDs: "keep", Store: &no, Schema: "gemini"}.RequestProfile("http://x/v1", "m")
	if p.ToolCallIDs != "" || !p.NoUserAfterTool || !p.StoreFalse || p.Schema != llm.SchemaGemini {
		t.Errorf("named profile with overrides: %+v", p)
	}
	p = Provider{Profile: "none"}.RequestProfile("https://api.openai.com/v1", "gpt-5")
	if p.StoreFalse || p.NoSampling {
		t.Errorf("none: %+v", p)
	}
}

// TestProviderSchemaNames keeps the schema's profile enum equal to the
// profiles the llm package knows.
func TestProviderSchemaNames(t *testing.T) {
	t.Parallel()
	var doc struct {
		Properties struct {
			Provider struct {
				Properties struct {
					Profile struct {
						Enum []string `json:"enum"`
					} `json:"profile"`
				} `json:"properties"`
			} `json:"provider"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(TaskSchema(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Properties.Provider.Properties.Profile.Enum; !slices.Equal(got, llm.ProfileNames()) {
		t.Errorf("task.schema.json provider.profile enum %v, llm.ProfileNames() %v", got, llm.ProfileNames())
	}
}
