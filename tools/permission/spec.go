package permission

import (
	"fmt"
	"sort"
)

// FromSpec builds a Ruleset from a task spec's permissions block as decoded
// from YAML or JSON: each key is a permission name and each value is either
// an action ("allow", "deny"), which becomes the rule pattern "*", or a map
// of pattern to action. Rules come out sorted by permission, then pattern,
// so the result does not depend on map order.
//
// Errors wrap ErrBadSpec, ErrUnknownAction or ErrAsk and name the key.
func FromSpec(m map[string]any) (Ruleset, error) {
	var rs Ruleset
	for perm, v := range m {
		if perm == "" {
			return nil, fmt.Errorf("%w: empty permission name", ErrBadSpec)
		}
		switch val := v.(type) {
		case string:
			a, err := parseAction(val)
			if err != nil {
				return nil, fmt.Errorf("permissions.%s: %w", perm, err)
			}
			rs = append(rs, Rule{Permission: perm, Pattern: "*", Action: a})
		case map[string]any:
			for pat, pv := range val {
				r, err := patternRule(perm, pat, pv)
				if err != nil {
					return nil, err
				}
				rs = append(rs, r)
			}
		case map[any]any:
			for k, pv := range val {
				pat, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("%w: permissions.%s: pattern %v is not a string", ErrBadSpec, perm, k)
				}
				r, err := patternRule(perm, pat, pv)
				if err != nil {
					return nil, err
				}
				rs = append(rs, r)
			}
		default:
			return nil, fmt.Errorf("%w: permissions.%s: want an action or a map of pattern to action, got %T", ErrBadSpec, perm, v)
		}
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Permission != rs[j].Permission {
			return rs[i].Permission < rs[j].Permission
		}
		return rs[i].Pattern < rs[j].Pattern
	})
	return rs, nil
}

func patternRule(perm, pat string, v any) (Rule, error) {
	s, ok := v.(string)
	if !ok {
		return Rule{}, fmt.Errorf("%w: permissions.%s[%q]: want an action string, got %T", ErrBadSpec, perm, pat, v)
	}
	if pat == "" {
		return Rule{}, fmt.Errorf("%w: permissions.%s: empty pattern", ErrBadSpec, perm)
	}
	a, err := parseAction(s)
	if err != nil {
		return Rule{}, fmt.Errorf("permissions.%s[%q]: %w", perm, pat, err)
	}
	return Rule{Permission: perm, Pattern: pat, Action: a}, nil
}

// parseAction turns a spec string into an Action.
func parseAction(s string) (Action, error) {
	switch Action(s) {
	case Allow, Deny:
		return Action(s), nil
	case "ask":
		return "", fmt.Errorf("%w: nobody can answer a question in a headless run; use allow or deny", ErrAsk)
	}
	return "", fmt.Errorf("%w %q: use allow or deny", ErrUnknownAction, s)
}
