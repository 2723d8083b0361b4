package pipeline

import (
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// resolveModelName turns a shorthand (--model sonnet) into the catalog's
// full name, saying so, and warns of a model the catalog does not know.
func (r *execRun) resolveModelName() {
	if full, ok := r.catalog.Resolve(r.modelName); ok {
		fmt.Fprintf(r.opts.Stderr, "runner: note: model %s is %s, the model catalog's current one\n", r.modelName, full)
		r.modelName = full
	}
	if msg, unknown := UnknownModel(r.catalog, r.modelName); unknown {
		fmt.Fprintf(r.opts.Stderr, "runner: warning: %s\n", msg)
	}
}

// UnknownModel is the warning for a model the catalog cat does not hold
// (a typo, or a gateway's own name, which stays usable): its cost is
// unknown. unknown is false, and msg "", for a known model.
func UnknownModel(cat llm.Catalog, model string) (msg string, unknown bool) {
	if _, ok := cat.Lookup(model); ok {
		return "", false
	}
	msg = fmt.Sprintf("model %q is not in the model catalog, so its cost is unknown (result.json says null) "+
		"and no cost budget can stop the run", model)
	if near := cat.Similar(model); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	} else {
		msg += "."
	}
	return msg + fmt.Sprintf(" If the name is right (a gateway's or a local model), give its price in the task spec: "+
		"models: {%q: {input_price_per_million: …, output_price_per_million: …}}", model), true
}

// UnknownSpecModel is UnknownModel for the model of a task spec, at the
// position of its model key; nil when the spec names no model or a known
// one.
func UnknownSpecModel(task *spec.Spec) *spec.Error {
	if task.Model == "" {
		return nil
	}
	msg, unknown := UnknownModel(catalogFor(task), task.Model)
	if !unknown {
		return nil
	}
	p, ok := task.Position("model")
	if !ok {
		p = spec.Pos{Line: 1, Col: 1}
	}
	return &spec.Error{File: task.Path, Line: p.Line, Col: p.Col, Msg: msg}
}

// didYouMean is "; model X is not in the model catalog: did you mean Y?"
// for an unknown model with close catalog names, else "".
func didYouMean(cat llm.Catalog, model string) string {
	if _, ok := cat.Lookup(model); ok {
		return ""
	}
	near := cat.Similar(model)
	if len(near) == 0 {
		return ""
	}
	hint := fmt.Sprintf("; model %q is not in the model catalog: did you mean %s?", model, strings.Join(near, " or "))
	if strings.HasPrefix(near[0], "claude-") {
		hint += " (a Claude model is sent over the anthropic wire with ANTHROPIC_API_KEY)"
	}
	return hint
}

// IgnoredEffort is the warning for a reasoning effort asked of a model
// the catalog cat knows does not reason (gpt-4.1-mini): the effort is not
// sent, as OpenAI refuses it with a 400. drop is false, and msg "", when
// effort is "" or the model reasons or is unknown.
func IgnoredEffort(cat llm.Catalog, model, effort string) (msg string, drop bool) {
	if effort == "" {
		return "", false
	}
	if m, ok := cat.Lookup(model); !ok || !m.NoReasoning {
		return "", false
	}
	return fmt.Sprintf("reasoning_effort %q is not sent: model %q does not reason by the model catalog, "+
		"and its API refuses the option; drop reasoning_effort, or pick a reasoning model (gpt-5-mini, o4-mini)",
		effort, model), true
}

// IgnoredSpecEffort is IgnoredEffort for a task spec's own model, at the
// position of its reasoning_effort key; nil when nothing is dropped.
func IgnoredSpecEffort(task *spec.Spec) *spec.Error {
	msg, drop := IgnoredEffort(catalogFor(task), task.Model, task.ReasoningEffort)
	if !drop {
		return nil
	}
	p, ok := task.Position("reasoning_effort")
	if !ok {
		p = spec.Pos{Line: 1, Col: 1}
	}
	return &spec.Error{File: task.Path, Line: p.Line, Col: p.Col, Msg: msg}
}
