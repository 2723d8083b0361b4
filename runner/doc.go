// Package runner is the headless agent loop: a Session holds the
// conversation as messages made of parts, runLoop drives it step by step and
// the processor turns each streamed model response into parts, running tool
// calls as soon as their arguments are complete.
//
// It follows OpenCode's session engine (runLoop in session/prompt.ts,
// processor.ts), made headless: nobody can answer a question, so every stop
// is decided by a rule — the model finished, a limit was reached (steps,
// cost, tokens, time), permissions were denied too often, or the provider
// failed after retries. Every step and decision goes out as events to an
// event.Sink; run.started and run.finished are the caller's (the pipeline
// also runs checks and writes the final patch).
//
// History is append-only between compactions, the tool list is sorted by
// name and the system prompt (with the date fixed at the start of the run)
// is byte-stable, so each request begins with the exact bytes of the
// previous one and provider prompt caches keep hitting.
//
// Decisions taken where the reference design leaves a choice:
//
//   - A turn with tool calls always continues, whatever the finish reason
//     said (a provider may say stop with calls in the turn).
//   - A turn without tool calls ends the run: stop (or an unknown reason)
//     is success with the turn's text as the final message; length is
//     continued once with a note, and fails the second time in a row;
//     content-filter and error fail. With an output schema, a text-only
//     turn counts as a failed structured-output try and the model is told
//     to call StructuredOutput (three tries in all, then status failed).
//   - On the last step (max_steps) the tool definitions stay in the request,
//     so the cached prompt prefix survives, but the tool choice is none and
//     any call gets an error result; with an output schema only
//     StructuredOutput may run. A final text on that step is success.
//   - A retryable failure before any tool ran discards the attempt and
//     re-sends the same request. If tools already ran (their effects are in
//     the work tree), the attempt is kept reduced to those calls and their
//     results, the step closes with finish reason error, and the next step
//     starts after the backoff. Events already emitted for a discarded
//     attempt (whole text parts) stay in the log, followed by the retry.
//   - Compaction keeps the tool definitions (tool choice none) so the
//     summary request shares the cached prefix; if that request overflows
//     too, tool outputs are left out of it once.
//   - Costs: Result.CostUSD is nil as soon as one call's price is unknown;
//     max_cost_usd then still applies to the known part. max_tokens counts
//     input plus output tokens over all calls, compaction included.
//   - Timeout is a deadline from the first Run over the whole session,
//     Continue included; a cancelled context gives status cancelled, a
//     deadline status timeout. Either way Run returns a Result.
//
// The package declares the small interfaces it consumes (Model, Policy,
// Snapshotter, Pricer, ContextWindower); llm, tools/permission and
// runner/snapshot implement them.
//
// Imports: runner/event, tools, tools/permission, internal/safefs and llm;
// never pipeline or github.
package runner
