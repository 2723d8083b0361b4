package spec

import "gopkg.in/yaml.v3"

// TotalLimits bound a whole conversation ("limits.total"): the runs a
// chain of runner exec --continue makes together. A zero value means no
// limit. The per-run limits still apply to each run.
type TotalLimits struct {
	MaxSteps   int     // "max_steps": model steps over the conversation
	MaxCostUSD float64 // "max_cost_usd": estimated cost in US dollars
	MaxTokens  int64   // "max_tokens": input + output tokens
}

// Any reports whether a total limit is set.
func (t TotalLimits) Any() bool { return t.MaxSteps > 0 || t.MaxCostUSD > 0 || t.MaxTokens > 0 }

// totalLimits decodes "limits.total".
func (d *Decoder) totalLimits(path string, n *yaml.Node) TotalLimits {
	var t TotalLimits
	d.Mapping(path, n, FieldFuncs{
		"max_steps":    func(p string, n *yaml.Node) { t.MaxSteps = int(d.Integer(p, n, 1)) },
		"max_cost_usd": func(p string, n *yaml.Node) { t.MaxCostUSD = d.Number(p, n) },
		"max_tokens":   func(p string, n *yaml.Node) { t.MaxTokens = d.Integer(p, n, 1) },
	})
	return t
}
