package llm

import (
	"slices"
	"strings"
)

// shorthands maps the short names people type for Claude ("--model
// sonnet") to the catalog's current model of that family.
func shorthands() map[string]string {
	return map[string]string{
		"sonnet": "claude-sonnet-4-5",
		"opus":   "claude-opus-4-5",
		"haiku":  "claude-haiku-4-5",
	}
}

// Resolve returns the full name of a shorthand ("sonnet" is
// "claude-sonnet-4-5") and true; any other name, and a shorthand the
// catalog holds under its own name (a spec's models: entry), come back
// unchanged with false.
func (c Catalog) Resolve(model string) (string, bool) {
	key := normalise(model)
	full, ok := shorthands()[key]
	if _, own := c.models[key]; !ok || own {
		return model, false
	}
	if m, known := c.models[full]; known {
		full = m.Name
	}
	return full, true
}

// Similar returns up to three catalog names close to model, closest first,
// for a "did you mean": names within a few edits of it, and the model a
// shorthand or a name it is part of stands for.
func (c Catalog) Similar(model string) []string {
	name := candidates(model)[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		return nil
	}
	type near struct {
		name string
		dist int
	}
	best := map[string]int{}
	consider := func(key, full string) {
		d := editDistance(name, key)
		if d > max(2, len(name)/4) && !(len(name) >= 4 && strings.Contains(key, name)) {
			return
		}
		if old, ok := best[full]; !ok || d < old {
			best[full] = d
		}
	}
	for key, m := range c.models {
		consider(key, m.Name)
	}
	for short, full := range shorthands() {
		if m, ok := c.models[full]; ok {
			consider(short, m.Name)
		}
	}
	list := make([]near, 0, len(best))
	for n, d := range best {
		list = append(list, near{n, d})
	}
	slices.SortFunc(list, func(a, b near) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, 3)
	for _, n := range list[:min(len(list), 3)] {
		out = append(out, n.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
