package telemetry

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/semconv/v1.40.0/genaiconv"
)

// instruments are the run's metrics: the GenAI conventions' client
// metrics, and the runner's own (runner.*).
type instruments struct {
	tokenUsage   genaiconv.ClientTokenUsage        // gen_ai.client.token.usage, by gen_ai.token.type
	opDuration   genaiconv.ClientOperationDuration // gen_ai.client.operation.duration, per model call
	tokens       metric.Int64Counter               // runner.tokens, by runner.token.type (input, output, reasoning, cache_read, cache_write)
	cost         metric.Float64Counter             // runner.cost, USD
	runs         metric.Int64Counter               // runner.runs, by runner.status and error.type
	runDuration  metric.Float64Histogram           // runner.run.duration, s
	steps        metric.Int64Counter               // runner.steps
	toolCalls    metric.Int64Counter               // runner.tool.calls, by gen_ai.tool.name and runner.verdict
	toolDuration metric.Float64Histogram           // runner.tool.duration, s
	denials      metric.Int64Counter               // runner.denials, by runner.permission
	checks       metric.Int64Counter               // runner.checks, by runner.check.name and runner.check.passed
}

// newInstruments makes the instruments on m (nil: instruments that record
// nothing). Errors only come from invalid names, fixed here.
func newInstruments(m metric.Meter) instruments {
	if m == nil {
		m = noop.NewMeterProvider().Meter(scope)
	}
	var in instruments
	in.tokenUsage, _ = genaiconv.NewClientTokenUsage(m)
	in.opDuration, _ = genaiconv.NewClientOperationDuration(m)
	in.tokens, _ = m.Int64Counter("runner.tokens", metric.WithUnit("{token}"), metric.WithDescription("Tokens of the model calls, by type."))
	in.cost, _ = m.Float64Counter("runner.cost", metric.WithUnit("USD"), metric.WithDescription("Cost of the model calls whose price is known."))
	in.runs, _ = m.Int64Counter("runner.runs", metric.WithUnit("{run}"), metric.WithDescription("Finished runs, by status and error class."))
	in.runDuration, _ = m.Float64Histogram("runner.run.duration", metric.WithUnit("s"), metric.WithDescription("Duration of a run."))
	in.steps, _ = m.Int64Counter("runner.steps", metric.WithUnit("{step}"), metric.WithDescription("Model steps."))
	in.toolCalls, _ = m.Int64Counter("runner.tool.calls", metric.WithUnit("{call}"), metric.WithDescription("Tool calls, by tool and verdict."))
	in.toolDuration, _ = m.Float64Histogram("runner.tool.duration", metric.WithUnit("s"), metric.WithDescription("Duration of a tool call."))
	in.denials, _ = m.Int64Counter("runner.denials", metric.WithUnit("{call}"), metric.WithDescription("Calls the permissions refused."))
	in.checks, _ = m.Int64Counter("runner.checks", metric.WithUnit("{check}"), metric.WithDescription("Check commands run, by name and outcome."))
	return in
}
