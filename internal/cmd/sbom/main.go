// Command sbom writes a CycloneDX 1.5 JSON SBOM of a Go binary from the
// build information the Go linker embeds in it (`go version -m`): the
// main module, every dependency module with its version and go.sum hash,
// and the build settings. The release (.goreleaser.yaml, sboms) runs it
// for each binary, so no other tool (syft) is needed.
//
// Usage: go run ./internal/cmd/sbom [-version vX.Y.Z] BINARY OUT.cdx.json
//
// -version names the main module's version where the build information
// has none: a binary built from a checkout says "(devel)", and -trimpath
// leaves the -ldflags that stamp the version out of it.
//
// Imports: no module package.
package main

import (
	"debug/buildinfo"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
)

func main() {
	version := flag.String("version", "", "the main module's version, where the build information has none")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: sbom [-version vX.Y.Z] BINARY OUT.cdx.json")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *version); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(bin, out, version string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("%s: no Go build information (%w); is it a Go binary?", bin, err)
	}
	if version != "" && (info.Main.Version == "" || info.Main.Version == "(devel)") {
		info.Main.Version = version
	}
	data, err := json.MarshalIndent(document(info), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(data, '\n'), 0o644)
}

// bom is the subset of a CycloneDX 1.5 document the SBOM fills in.
type bom struct {
	Format      string      `json:"bomFormat"`
	SpecVersion string      `json:"specVersion"`
	Version     int         `json:"version"`
	Metadata    metadata    `json:"metadata"`
	Components  []component `json:"components"`
}

type metadata struct {
	Tools      tools      `json:"tools"`
	Component  component  `json:"component"`
	Properties []property `json:"properties,omitempty"`
}

type tools struct {
	Components []component `json:"components"`
}

type component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// document is the SBOM of the binary described by info.
func document(info *buildinfo.BuildInfo) bom {
	root := module(info.Main, "application")
	root.Name = info.Path // the main package, as `go version -m` names it
	d := bom{Format: "CycloneDX", SpecVersion: "1.5", Version: 1,
		Metadata: metadata{
			Tools:      tools{Components: []component{{Type: "application", Name: "runner internal/cmd/sbom (Go build info)"}}},
			Component:  root,
			Properties: []property{{Name: "go:toolchain", Value: info.GoVersion}},
		},
		Components: []component{}}
	for _, s := range info.Settings {
		d.Metadata.Properties = append(d.Metadata.Properties, property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		d.Components = append(d.Components, module(*dep, "library"))
	}
	return d
}

// module is one Go module as a component: its package URL and its go.sum
// hash (a property: "h1:" hashes the module's file list, not one file).
func module(m debug.Module, typ string) component {
	c := component{Type: typ, Name: m.Path, Version: m.Version}
	if m.Version != "" && m.Version != "(devel)" {
		c.PURL = "pkg:golang/" + m.Path + "@" + m.Version
		c.BOMRef = c.PURL
	}
	if m.Sum != "" {
		c.Properties = []property{{Name: "go:sum", Value: m.Sum}}
	}
	return c
}
