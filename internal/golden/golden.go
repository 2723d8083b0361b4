// Package golden is the module's one golden-file helper for tests: Check
// compares output with a file under testdata/ and rewrites the file when
// the test binary runs with -update (`make golden` passes it to every
// package that imports this one). Generated files that are not compared
// byte for byte (generated docs sections, a recorded cassette) ask Update.
//
// Imports: the standard library and go-cmp; nothing of this module, so
// that the tests of every package, llm included, can use it.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden and generated files instead of comparing with them")

// Update reports whether the test binary runs with -update.
func Update() bool { return *update }

// Check compares got with the file at path (relative to the package
// directory, usually testdata/…). With -update it first writes got there,
// creating directories. A missing file or a difference fails the test with
// a -want +got diff and says how to refresh the file.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got; if the change is intended, run go test -update):\n%s", path, d)
	}
}
