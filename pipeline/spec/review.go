package spec

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Review is the "github.review" section: review mode. On a pull request
// (a pull_request event, a comment on one, or --pr N) the structured
// output's findings become one pull request review with line comments,
// its event from the verdict. It is written `review: true` or as a block
// of options.
type Review struct {
	// Approve posts an approve verdict as an APPROVE review ("approve",
	// default true); false posts it as a COMMENT, for repositories where
	// the runner's approval must not count.
	Approve bool
}

// ReviewExample is the task spec to copy for review mode, named in errors.
const ReviewExample = "examples/review/task.yaml"

// review decodes "github.review": true, false (nil: off) or a mapping.
func (d *Decoder) review(path string, n *yaml.Node) *Review {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		if !d.Boolean(path, n) {
			return nil
		}
		return &Review{Approve: true}
	}
	r := &Review{Approve: true}
	if n.Kind != yaml.MappingNode {
		d.TypeError(path, n, "true, false or a mapping", "e.g. review: true, or review: {approve: false}")
		return nil
	}
	d.Mapping(path, n, FieldFuncs{
		"approve": func(p string, n *yaml.Node) { r.Approve = d.Boolean(p, n) },
	})
	return r
}

// reviewFindingKeys are what every finding must declare for review mode.
var reviewFindingKeys = []string{"file", "line", "message"}

// checkReview, with github.review on, requires an output schema that
// gives findings a review can use: a "findings" array whose items have
// file, line and message properties (severity, suggestion, end_line and
// start_line are read when present), and a "verdict" property.
func (d *Decoder) checkReview(s *Spec) {
	if s.GitHub.Review == nil {
		return
	}
	at := d.pos["github.review"]
	hint := "declare output.schema as " + ReviewExample + " does"
	props, _ := s.Output.Schema["properties"].(map[string]any)
	if s.Output.Schema == nil {
		d.ErrorAtPos(at, hint, "github.review: review mode needs output.schema with verdict and findings")
		return
	}
	var missing []string
	if _, ok := props["verdict"]; !ok {
		missing = append(missing, "a verdict property (approve, comment, request_changes)")
	}
	findings, _ := props["findings"].(map[string]any)
	items, _ := findings["items"].(map[string]any)
	itemProps, _ := items["properties"].(map[string]any)
	switch {
	case findings == nil:
		missing = append(missing, "a findings property")
	case findings["type"] != "array" || itemProps == nil:
		missing = append(missing, "findings as an array of objects (type: array, items: {properties: …})")
	default:
		var keys []string
		for _, k := range reviewFindingKeys {
			if _, ok := itemProps[k]; !ok {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			missing = append(missing, "findings items with "+strings.Join(keys, ", "))
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		d.ErrorAtPos(at, hint, "github.review: output.schema lacks %s", strings.Join(missing, "; "))
	}
}
