package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestSBOMOfGoBinary: the SBOM of this test binary lists every module its
// build information names, by package URL, with the toolchain.
func TestSBOMOfGoBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bom.cdx.json")
	if err := run(exe, out, "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got bom
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	if got.Format != "CycloneDX" || got.SpecVersion != "1.5" || got.Metadata.Component.Name != info.Path {
		t.Errorf("header %s %s, main %q; want CycloneDX 1.5 naming %q", got.Format, got.SpecVersion, got.Metadata.Component.Name, info.Path)
	}
	// A test binary's main module is "(devel)": -version names it.
	if c := got.Metadata.Component; c.Version != "v1.2.3" || c.PURL != "pkg:golang/"+info.Main.Path+"@v1.2.3" {
		t.Errorf("main component %+v, want version v1.2.3 and its package URL", c)
	}
	purls := map[string]bool{}
	for _, c := range got.Components {
		purls[c.PURL] = true
	}
	if len(got.Components) != len(info.Deps) {
		t.Errorf("%d components, want one per module of the build info (%d)", len(got.Components), len(info.Deps))
	}
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		if want := "pkg:golang/" + d.Path + "@" + d.Version; !purls[want] {
			t.Errorf("no component %s", want)
		}
	}
	if !strings.Contains(string(data), `"value": "`+info.GoVersion+`"`) {
		t.Errorf("the SBOM does not name the toolchain %s", info.GoVersion)
	}
}

// TestSBOMOfNonGoFile: a file without Go build information is an error
// that names it.
func TestSBOMOfNonGoFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := run(f, filepath.Join(t.TempDir(), "out.json"), "")
	if err == nil || !strings.Contains(err.Error(), "script.sh: no Go build information") {
		t.Errorf("err = %v, want one naming the file", err)
	}
}
