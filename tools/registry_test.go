package tools

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
)

func TestRegistryInfosGolden(t *testing.T) {
	t.Parallel()
	env := Env{WorkTree: t.TempDir()}
	r := NewRegistry(Builtins(env)...)
	if got, want := r.Names(), []string{"bash", "edit", "glob", "grep", "list", "read", "write"}; !slices.Equal(got, want) {
		t.Fatalf("names = %v, want %v", got, want)
	}
	first, err := json.MarshalIndent(r.Infos(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// byte-stable: a registry built from the tools in another order
	ts := Builtins(env)
	slices.Reverse(ts)
	again, _ := json.MarshalIndent(NewRegistry(ts...).Infos(), "", "  ")
	if !bytes.Equal(first, again) {
		t.Fatal("Infos differ between registries")
	}
	golden.Check(t, filepath.Join("testdata", "infos.golden.json"), append(first, '\n'))
	for _, info := range r.Infos() {
		var s map[string]any
		if err := json.Unmarshal(info.Parameters, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s: parameters %s", info.Name, info.Parameters)
		}
		if info.Description == "" {
			t.Errorf("%s: no description", info.Name)
		}
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
	res, err := r.Run(t.Context(), "nope", Call{})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "bash, edit, glob") {
		t.Errorf("Run(nope) = %+v, %v", res, err)
	}
}

func TestSchemaRequired(t *testing.T) {
	t.Parallel()
	var s schema
	if err := json.Unmarshal(schemaFor(EditParams{}), &s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Required, []string{"path", "old_string", "new_string"}) || s.Properties["replace_all"].Type != "boolean" {
		t.Errorf("schema = %+v", s)
	}
}

func TestDecodeParams(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `null`, `[]`, `{"path": 3}`, `{"offset": 1}`, `{`} {
		if _, err := decodeParams[ReadParams](json.RawMessage(in)); err == nil {
			t.Errorf("decodeParams(%q) accepted", in)
		}
	}
	p, err := decodeParams[ReadParams](json.RawMessage(`{"path":"a","extra":1}`))
	if err != nil || p.Path != "a" {
		t.Errorf("decodeParams = %+v, %v", p, err)
	}
}
