package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"

	"github.com/seed43ef5acb/runner/internal/telemetry"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/cloudauth"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// DefaultBaseURL is the endpoint used when neither --base-url nor
// OPENAI_BASE_URL is given.
const DefaultBaseURL = "https://api.openai.com/v1"

// setupModel resolves the model, the endpoint and the HTTP transport
// (live, recording or replaying) and builds the provider.
func (r *execRun) setupModel(ctx context.Context) error {
	r.modelName = cmp.Or(r.opts.Model, r.spec.Model)
	if r.modelName == "" {
		where := ", --model or RUNNER_MODEL"
		if r.inActions() {
			where = " or the action's model input (RUNNER_MODEL)"
		}
		return fmt.Errorf("%w: no model: set model in the task spec%s", ErrUsage, where)
	}
	r.catalog = catalogFor(r.spec)
	r.resolveModelName()
	named := llm.Wire(cmp.Or(r.opts.Wire, r.spec.Provider.Wire))
	platform := llm.Platform(r.spec.Provider.Platform)
	if platform == "anthropic" {
		platform = llm.PlatformAnthropic
	}
	if platform != llm.PlatformAnthropic {
		if named != "" && named != llm.WireAnthropic {
			return fmt.Errorf("%w: provider.platform %s serves Claude over the anthropic wire, not --wire %s", ErrUsage, platform, named)
		}
		named = llm.WireAnthropic
	}
	r.wire = r.catalog.ChooseWire(named, r.opts.BaseURL, r.modelName, r.getenv("ANTHROPIC_API_KEY") != "")
	if named == "" && r.wire == llm.WireChat && r.opts.APIKey == "" && r.opts.Replay == "" &&
		r.catalog.NativeWire(r.modelName) == llm.WireAnthropic {
		// Chat has no key to send: a Claude model goes to its own wire,
		// and a missing key is then ANTHROPIC_API_KEY.
		r.wire = llm.WireAnthropic
	}
	if named != "" {
		if err := r.catalog.CheckWire(r.wire, r.modelName); err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
	}
	if err := r.wire.CheckEffort(r.spec.ReasoningEffort); err != nil {
		pos, _ := r.spec.Position("reasoning_effort")
		return fmt.Errorf("%w: %s:%d:%d: %w (change it, or name another wire with provider.wire)", ErrUsage, r.spec.Path, pos.Line, pos.Col, err)
	}
	r.effort = r.spec.ReasoningEffort
	if msg, drop := IgnoredEffort(r.catalog, r.modelName, r.effort); drop {
		fmt.Fprintf(r.opts.Stderr, "runner: warning: %s\n", msg)
		r.effort = ""
	}
	r.baseURL = r.wireBaseURL()
	if err := llm.CheckBaseURL(r.baseURL); err != nil {
		return fmt.Errorf("%w: %w (from %s)", ErrUsage, err, r.baseURLSource())
	}
	cfg := llm.Config{}
	if platform != llm.PlatformAnthropic {
		if err := r.setupCloud(ctx, platform, &cfg); err != nil {
			return err
		}
	}
	key, keyVar := r.opts.APIKey, "OPENAI_API_KEY"
	if r.wire == llm.WireAnthropic {
		key, keyVar = r.getenv("ANTHROPIC_API_KEY"), "ANTHROPIC_API_KEY"
	}
	if key == "" && r.opts.Replay == "" && cfg.Cloud == nil {
		return fmt.Errorf("%w: %s is not set: set it to talk to %s (wire %s) "+
			"(any non-empty value for an endpoint that needs none), or replay a recorded session with --replay FILE%s",
			ErrUsage, keyVar, r.baseURL, r.wire, didYouMean(r.catalog, r.modelName))
	}
	transport, err := r.transport(ctx)
	if err != nil {
		return err
	}
	if key == "" {
		key = "replay" // never sent anywhere: the cassette answers
	}
	cfg.BaseURL, cfg.APIKey, cfg.HTTPClient = r.baseURL, key, &http.Client{Transport: transport}
	cfg.Profile = r.spec.Provider.RequestProfile(r.baseURL, r.modelName)
	p, err := llm.NewWire(r.wire, cfg)
	if err != nil {
		r.closeRecord()
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	r.model = p
	return r.checkBudgetPriced()
}

// wireBaseURL is the endpoint of the run's wire: --base-url, else for
// anthropic ANTHROPIC_BASE_URL (an OPENAI_BASE_URL from the environment is
// not Anthropic's), else the wire's default.
func (r *execRun) wireBaseURL() string {
	if r.wire != llm.WireAnthropic {
		return cmp.Or(r.opts.BaseURL, DefaultBaseURL)
	}
	given := r.opts.BaseURL
	if given != "" && given == r.getenv("OPENAI_BASE_URL") {
		given = ""
	}
	return cmp.Or(given, r.getenv("ANTHROPIC_BASE_URL"), llm.DefaultAnthropicURL)
}

// baseURLSource names where the run's base URL came from, for an error
// about it.
func (r *execRun) baseURLSource() string {
	switch {
	case r.opts.BaseURL != "" && r.baseURL == r.opts.BaseURL:
		return "--base-url or OPENAI_BASE_URL"
	case r.wire == llm.WireAnthropic && r.baseURL == r.getenv("ANTHROPIC_BASE_URL"):
		return "ANTHROPIC_BASE_URL"
	}
	return "the default"
}

// setupCloud sets cfg's Cloud and Authorizer for Claude on Bedrock or
// Vertex: region and project from the spec or the vendors' variables,
// credentials from their default chains (none with --replay), and the
// endpoint from --base-url, ANTHROPIC_BEDROCK_BASE_URL or
// ANTHROPIC_VERTEX_BASE_URL, else the platform's.
func (r *execRun) setupCloud(ctx context.Context, platform llm.Platform, cfg *llm.Config) error {
	c := llm.Cloud{Platform: platform, Region: r.spec.Provider.Region, Project: r.spec.Provider.Project}
	replay := r.opts.Replay != ""
	var err error
	switch platform {
	case llm.PlatformBedrock:
		c.Region = cmp.Or(c.Region, r.getenv("AWS_REGION"), r.getenv("AWS_DEFAULT_REGION"))
		if !replay {
			cfg.Authorizer, c.Region, err = cloudauth.Bedrock(ctx, c.Region, r.getenv)
		}
	case llm.PlatformVertex:
		c.Region = cmp.Or(c.Region, r.getenv("CLOUD_ML_REGION"))
		var project string
		if !replay {
			cfg.Authorizer, project, err = cloudauth.Vertex(ctx)
		}
		c.Project = cmp.Or(c.Project, r.getenv("ANTHROPIC_VERTEX_PROJECT_ID"), project, r.getenv("GOOGLE_CLOUD_PROJECT"))
	}
	if err != nil {
		return fmt.Errorf("%w: provider.platform %s: %w", ErrUsage, platform, err)
	}
	if replay { // never sent anywhere: the cassette answers
		c.Region, c.Project = cmp.Or(c.Region, "replay"), cmp.Or(c.Project, "replay")
	}
	switch {
	case c.Region == "" && platform == llm.PlatformBedrock:
		return fmt.Errorf("%w: provider.platform bedrock needs a region: set provider.region in the spec or AWS_REGION", ErrUsage)
	case c.Region == "":
		return fmt.Errorf("%w: provider.platform vertex needs a location: set provider.region in the spec (us-east5, global, …) or CLOUD_ML_REGION", ErrUsage)
	case c.Project == "" && platform == llm.PlatformVertex:
		return fmt.Errorf("%w: provider.platform vertex needs a Google Cloud project: set provider.project in the spec or ANTHROPIC_VERTEX_PROJECT_ID", ErrUsage)
	}
	cfg.Cloud = &c
	given := r.opts.BaseURL
	if given != "" && given == r.getenv("OPENAI_BASE_URL") {
		given = ""
	}
	envVar := map[llm.Platform]string{llm.PlatformBedrock: "ANTHROPIC_BEDROCK_BASE_URL", llm.PlatformVertex: "ANTHROPIC_VERTEX_BASE_URL"}[platform]
	r.baseURL = cmp.Or(given, r.getenv(envVar), c.BaseURL())
	return nil
}

// checkBudgetPriced refuses a cost budget that could never stop the run:
// with no price for the model the cost stays unknown, and a budget on an
// unknown cost silently does nothing (a cron batch's main protection).
func (r *execRun) checkBudgetPriced() error {
	return budgetPriced(r.spec, r.catalog, r.modelName, r.opts.MaxCostUSD, r.opts.LimitsFrom)
}

// budgetPriced is checkBudgetPriced for task run with model and an
// options budget (ExecOptions.MaxCostUSD, set in from; "" = the command
// batch spec). The run's budget is limits.max_cost_usd lowered by the options',
// else limits.total.max_cost_usd. A budget of the spec's is a spec.Errors
// at the key's value (file:line:col); the options' is an error wrapping
// spec.ErrInvalidSpec that names from.
func budgetPriced(task *spec.Spec, cat llm.Catalog, model string, optBudget float64, from string) error {
	budget, key := task.Limits.MaxCostUSD, "limits.max_cost_usd"
	fromOpts := optBudget > 0 && (budget <= 0 || optBudget < budget)
	if fromOpts {
		budget = optBudget
	}
	if budget <= 0 {
		budget, key = task.Limits.Total.MaxCostUSD, "limits.total.max_cost_usd"
	}
	if budget <= 0 || priced(cat, model) {
		return nil
	}
	if fromOpts {
		msg, hint := UnpricedBudget("limits.max_cost_usd in "+cmp.Or(from, "the batch spec"), budget, model)
		return fmt.Errorf("%w: %s (%s)", spec.ErrInvalidSpec, msg, hint)
	}
	msg, hint := UnpricedBudget(key, budget, model)
	p, ok := task.Position(key)
	if !ok {
		p = spec.Pos{Line: 1, Col: 1}
	}
	return spec.Errors{{File: task.Path, Line: p.Line, Col: p.Col, Msg: msg, Hint: hint}}
}

// priced reports whether the catalogue has a price for model.
func priced(cat llm.Catalog, model string) bool {
	m, ok := cat.Lookup(model)
	return ok && m.Price != nil
}

// Priced reports whether model has a price in the catalogue exec uses for
// task (the default catalogue with the task's models: entries), i.e.
// whether a cost budget can stop its runs.
func Priced(task *spec.Spec, model string) bool { return priced(catalogFor(task), model) }

// UnpricedBudget is the message and hint of a cost budget (key: the
// budget's key, "limits.max_cost_usd"; budget in USD) on a model with no
// price: the refusal of exec, `runner validate` and `runner batch run`.
func UnpricedBudget(key string, budget float64, model string) (msg, hint string) {
	return fmt.Sprintf("%s is %g USD but model %q has no price in the catalogue, so its cost is unknown and the budget could never stop the run",
			key, budget, model),
		fmt.Sprintf("add its prices to the task spec, e.g. models: {%q: {input_price_per_million: …, output_price_per_million: …}}, "+
			"or bound the run with limits.max_tokens instead", model)
}

// CheckSpec checks what exec would refuse (exit 2) of a loaded task spec
// run with its own model, beyond what spec.Load checks: a cost budget
// (limits.max_cost_usd, limits.total.max_cost_usd) on a model with no
// price. It returns nil or spec.Errors at the budget's position. A spec
// with no model is not judged: the model comes from --model at run time.
// `runner validate` calls it.
func CheckSpec(task *spec.Spec) error {
	var errs spec.Errors
	if e := specEffort(task); e != nil {
		errs = append(errs, e)
	}
	if task.Model != "" {
		err := budgetPriced(task, catalogFor(task), task.Model, 0, "")
		var es spec.Errors
		if err != nil && !errors.As(err, &es) {
			return err
		}
		errs = append(errs, es...)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.Sorted()
}

// specEffort refuses a reasoning_effort the spec's own wire cannot send
// (xhigh on provider.wire anthropic), at the key's position. A spec that
// names no wire is judged at run time, when the wire is chosen.
func specEffort(task *spec.Spec) *spec.Error {
	w := llm.Wire(task.Provider.Wire)
	if p := task.Provider.Platform; p == string(llm.PlatformBedrock) || p == string(llm.PlatformVertex) {
		w = llm.WireAnthropic
	}
	if w == "" {
		return nil
	}
	err := w.CheckEffort(task.ReasoningEffort)
	if err == nil {
		return nil
	}
	p, ok := task.Position("reasoning_effort")
	if !ok {
		p = spec.Pos{Line: 1, Col: 1}
	}
	return &spec.Error{File: task.Path, Line: p.Line, Col: p.Col, Msg: err.Error(),
		Hint: "change it, or name another wire with provider.wire"}
}

// transport is the HTTP transport of model calls: the cassette with
// --replay, a recorder in front of the network with --record, else the
// network.
func (r *execRun) transport(_ context.Context) (http.RoundTripper, error) {
	switch {
	case r.opts.Replay != "":
		f, err := os.Open(r.opts.Replay)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: --replay %s: no such file: give a cassette FILE "+
				"(record one with runner exec TASK.yaml --record FILE)", ErrUsage, r.opts.Replay)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: --replay: %w", ErrUsage, err)
		}
		defer f.Close()
		c, err := llm.LoadCassette(f)
		if err != nil {
			return nil, fmt.Errorf("%w: --replay %s: %w", ErrUsage, r.opts.Replay, err)
		}
		c.Source = r.opts.Replay
		r.replayPrompt = recordedPrompt(c)
		return c.RoundTripper(), nil
	case r.opts.Record != "" && r.dry:
		return http.DefaultTransport, nil // Check writes nothing
	case r.opts.Record != "":
		f, err := r.outFiles.Create(r.opts.Record)
		if err != nil {
			return nil, fmt.Errorf("%w: --record: %w", ErrUsage, err)
		}
		r.record = f
		return llm.NewRecorder(f, r.httpTransport()), nil // records the request as the client made it
	default:
		return r.httpTransport(), nil
	}
}

// closeRecord closes the --record file.
// A cassette holds the conversation, tool output included: it is redacted
// in place once closed (its headers were redacted as recorded).
func (r *execRun) closeRecord() {
	if r.record == nil {
		return
	}
	_ = r.record.Close()
	r.record = nil
	if r.redactor == nil {
		return
	}
	if data, err := os.ReadFile(r.opts.Record); err == nil {
		if red := r.redactor.RedactBytes(data); !bytes.Equal(red, data) {
			_ = os.WriteFile(r.opts.Record, red, 0o644)
		}
	}
}

// catalogFor is the default model catalog with the spec's overrides.
func catalogFor(s *spec.Spec) llm.Catalog {
	cat := llm.DefaultCatalog()
	for name, o := range s.Models {
		info, ok := cat.Lookup(name)
		if !ok {
			info = llm.ModelInfo{}
		}
		info.Name, info.Aliases = name, nil
		if o.ContextWindow > 0 {
			info.ContextWindow = o.ContextWindow
		}
		if o.MaxOutput > 0 {
			info.MaxOutput = o.MaxOutput
		}
		info.Price = overridePrice(info.Price, o)
		if o.Wires != nil {
			info.Wires = o.Wires
		}
		cat = cat.With(info)
	}
	return cat
}

// overridePrice applies the spec's price fields to a catalog price.
func overridePrice(p *llm.Price, o spec.ModelOverride) *llm.Price {
	if o.InputPrice == nil && o.OutputPrice == nil && o.CachedInputPrice == nil {
		return p
	}
	out := llm.Price{}
	if p != nil {
		out = *p
	}
	if o.InputPrice != nil {
		out.InputPerM = *o.InputPrice
	}
	if o.OutputPrice != nil {
		out.OutputPerM = *o.OutputPrice
	}
	if o.CachedInputPrice != nil {
		out.CachedInputPerM = *o.CachedInputPrice
	}
	return &out
}

// httpTransport sends model requests with User-Agent runner/<version> and,
// when telemetry exports traces, traceparent.
func (r *execRun) httpTransport() http.RoundTripper {
	return telemetry.Transport(http.DefaultTransport, Version(), r.telemetryRun())
}

// telemetryRun is this run's telemetry, made on first use (nil without
// telemetry): the runs of a batch at once share opts.Telemetry, and each
// request must name its own run's span.
func (r *execRun) telemetryRun() *telemetry.Run {
	if r.tel == nil {
		r.tel = r.opts.Telemetry.NewRun()
	}
	return r.tel
}
