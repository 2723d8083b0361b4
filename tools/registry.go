package tools

import (
	"context"
	"sort"
	"strings"
)

// Registry holds the tools offered to the model, by name.
type Registry struct {
	byName map[string]Tool
	names  []string // sorted
}

// NewRegistry registers tools; a later tool with the same name replaces an
// earlier one.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{byName: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		r.byName[t.Info().Name] = t
	}
	for name := range r.byName {
		r.names = append(r.names, name)
	}
	sort.Strings(r.names)
	return r
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Infos describes every tool, sorted by name, so the tools part of every
// request is byte-identical across steps.
func (r *Registry) Infos() []Info {
	out := make([]Info, 0, len(r.names))
	for _, name := range r.names {
		out = append(out, r.byName[name].Info())
	}
	return out
}

// Names lists the registered tool names, sorted.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// Run runs the tool called name. An unknown name is an error Result that
// lists the tools there are (models sometimes invent tool names).
func (r *Registry) Run(ctx context.Context, name string, call Call) (Result, error) {
	t, ok := r.byName[name]
	if !ok {
		return errorResult("unknown tool %q; the tools are: %s.", name, strings.Join(r.names, ", ")), nil
	}
	return t.Run(ctx, call)
}
