package spec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadBytes: loading never panics, and either succeeds or returns
// Errors whose every entry has a position.
func FuzzLoadBytes(f *testing.F) {
	seeds, _ := filepath.Glob("../../examples/*/task.yaml")
	seeds = append(seeds, "testdata/full.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base + "prompt: '{{ .Inputs.x }}'\n"))
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Add([]byte(base + "output:\n  schema: &s {type: object, properties: {a: *s}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := LoadBytes("fuzz.yaml", data)
		if err == nil {
			if s == nil || s.Name == "" || s.Prompt == "" || s.Version != Version {
				t.Fatalf("loaded an incomplete spec: %+v", s)
			}
			if _, err := s.Ruleset(); err != nil {
				t.Fatalf("loaded spec's permissions do not convert: %v", err)
			}
			return
		}
		var errs Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("error is not Errors: %v", err)
		}
		for _, e := range errs {
			if e.Line < 1 || e.Col < 1 || e.File != "fuzz.yaml" || e.Msg == "" {
				t.Fatalf("bad error: %#v", e)
			}
		}
	})
}
