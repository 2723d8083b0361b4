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
// The package declares the small interfaces it consumes (Model, Policy,
// Snapshotter, Pricer, ContextWindower); llm, tools/permission and
// runner/snapshot implement them.
package runner
