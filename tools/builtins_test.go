package tools

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
)

// TestBuiltinInfosGolden: the built-ins come sorted by name with
// byte-stable descriptions and object parameter schemas, so the tools part
// of every request is byte-identical across steps.
func TestBuiltinInfosGolden(t *testing.T) {
	t.Parallel()
	env := Env{WorkTree: t.TempDir()}
	ts := Builtins(env)
	infos := make([]Info, 0, len(ts))
	var names []string
	for _, tl := range ts {
		infos = append(infos, tl.Info())
		names = append(names, tl.Info().Name)
	}
	if want := []string{"bash", "edit", "glob", "grep", "list", "read", "write"}; !slices.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	first, err := json.MarshalIndent(infos, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "infos.golden.json"), append(first, '\n'))
	for _, info := range infos {
		var s map[string]any
		if err := json.Unmarshal(info.Parameters, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s: parameters %s", info.Name, info.Parameters)
		}
		if info.Description == "" {
			t.Errorf("%s: no description", info.Name)
		}
	}
	if _, ok := Named(ts, "nope"); ok {
		t.Error("Named(nope) found a tool")
	}
	if b, ok := Named(ts, "bash"); !ok || NewBash(env).Info().Name != b.Info().Name {
		t.Error("NewBash is not the bash built-in")
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
