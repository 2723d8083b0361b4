package llm

// defaultModels is the built-in catalog. Figures are list prices for the
// standard tier (no batch or flex discount) and the base context tier.
//
// Sources and dates. No network was used to compile this table: the figures
// are the author's best knowledge of each vendor's published pricing and
// model pages as of November 2025, cross-checked where possible against
// third-party pricing summaries; verify against the vendor page before
// relying on a figure, and override it in the task spec if it has moved.
//   - OpenAI: https://platform.openai.com/docs/pricing and the model pages
//     (https://platform.openai.com/docs/models), 2025-11.
//   - Anthropic: https://docs.anthropic.com/en/docs/about-claude/pricing and
//     .../models/overview, 2025-11; cache write is the 5-minute rate.
//   - Google: https://ai.google.dev/gemini-api/docs/pricing, 2025-11;
//     prompts up to 200k tokens (2.5 Pro costs more above that).
//   - DeepSeek: https://api-docs.deepseek.com/quick_start/pricing, V3.2-Exp
//     prices effective 2025-09-29; cached = cache-hit input.
//   - Mistral: https://mistral.ai/pricing and https://docs.mistral.ai/getting-started/models/,
//     2025-11; Mistral has no cached-input discount.
func defaultModels() []ModelInfo {
	const (
		k128 = 128_000
		k200 = 200_000
		m1   = 1_047_576 // GPT-4.1 family
		g1   = 1_048_576 // Gemini 2.5
	)
	price := func(in, cached, out, write float64) *Price {
		return &Price{InputPerM: in, CachedInputPerM: cached, OutputPerM: out, CacheWritePerM: write}
	}
	// The wires each family calls tools on, the one chosen first.
	var (
		claude        = []Wire{WireAnthropic, WireChat}
		responses     = []Wire{WireResponses, WireChat} // chat only with reasoning_effort "none"
		responsesOnly = []Wire{WireResponses}           // function tools are refused on chat
	)
	return []ModelInfo{
		// OpenAI, 2025-11, platform.openai.com/docs/pricing. GPT-4.1 and
		// GPT-4o do not reason: a reasoning effort is refused with a 400.
		{Name: "gpt-4.1", ContextWindow: m1, MaxOutput: 32_768, Price: price(2.00, 0.50, 8.00, 0), NoReasoning: true},
		{Name: "gpt-4.1-mini", ContextWindow: m1, MaxOutput: 32_768, Price: price(0.40, 0.10, 1.60, 0), NoReasoning: true},
		{Name: "gpt-4.1-nano", ContextWindow: m1, MaxOutput: 32_768, Price: price(0.10, 0.025, 0.40, 0), NoReasoning: true},
		{Name: "gpt-4o", ContextWindow: k128, MaxOutput: 16_384, Price: price(2.50, 1.25, 10.00, 0), NoReasoning: true},
		{Name: "gpt-4o-mini", ContextWindow: k128, MaxOutput: 16_384, Price: price(0.15, 0.075, 0.60, 0), NoReasoning: true},
		{Name: "o3", ContextWindow: k200, MaxOutput: 100_000, Price: price(2.00, 0.50, 8.00, 0)}, // after the 2025-06 price cut
		{Name: "o3-mini", ContextWindow: k200, MaxOutput: 100_000, Price: price(1.10, 0.55, 4.40, 0)},
		{Name: "o4-mini", ContextWindow: k200, MaxOutput: 100_000, Price: price(1.10, 0.275, 4.40, 0)},
		{Name: "gpt-5", ContextWindow: 400_000, MaxOutput: 128_000, Price: price(1.25, 0.125, 10.00, 0),
			Aliases: []string{"gpt-5-chat"}},
		{Name: "gpt-5-codex", ContextWindow: 400_000, MaxOutput: 128_000, Price: price(1.25, 0.125, 10.00, 0), Wires: responsesOnly},
		{Name: "gpt-5-mini", ContextWindow: 400_000, MaxOutput: 128_000, Price: price(0.25, 0.025, 2.00, 0)},
		{Name: "gpt-5-nano", ContextWindow: 400_000, MaxOutput: 128_000, Price: price(0.05, 0.005, 0.40, 0)},
		{Name: "gpt-5.1", ContextWindow: 400_000, MaxOutput: 128_000, Price: price(1.25, 0.125, 10.00, 0),
			Aliases: []string{"gpt-5.1-chat"}},
		{Name: "gpt-5.1-codex", ContextWindow: 400_000, MaxOutput: 128_000, Price: price(1.25, 0.125, 10.00, 0), Wires: responsesOnly},

		// OpenAI, 2026-03, developers.openai.com/api/docs/models/gpt-5.4 (prompts up to 272k).
		{Name: "gpt-5.4", ContextWindow: 1_050_000, MaxOutput: 128_000, Price: price(2.50, 0.25, 15.00, 0), Wires: responses},
		// OpenAI's later models, by their wires alone (figures unknown here:
		// set them under models: in the task spec). Function tools with
		// reasoning need the Responses API (openai/openai-cookbook#2236,
		// genkit-ai/genkit#6303).
		{Name: "gpt-5.3-codex", Wires: responsesOnly},
		{Name: "gpt-5.5", Wires: responses},
		{Name: "gpt-5.6", Wires: responses},
		{Name: "gpt-6-astra", Wires: responsesOnly},

		// Anthropic, 2025-11, docs.anthropic.com pricing; 200k context (1M in beta for Sonnet 4/4.5 at other prices).
		{Name: "claude-opus-4-5", ContextWindow: k200, MaxOutput: 64_000, Price: price(5.00, 0.50, 25.00, 6.25),
			Aliases: []string{"claude-opus-4.5"}, Wires: claude},
		{Name: "claude-opus-4-1", ContextWindow: k200, MaxOutput: 32_000, Price: price(15.00, 1.50, 75.00, 18.75),
			Aliases: []string{"claude-opus-4.1"}, Wires: claude},
		{Name: "claude-opus-4", ContextWindow: k200, MaxOutput: 32_000, Price: price(15.00, 1.50, 75.00, 18.75),
			Aliases: []string{"claude-opus-4-0"}, Wires: claude},
		{Name: "claude-sonnet-4-5", ContextWindow: k200, MaxOutput: 64_000, Price: price(3.00, 0.30, 15.00, 3.75),
			Aliases: []string{"claude-sonnet-4.5"}, Wires: claude},
		{Name: "claude-sonnet-4", ContextWindow: k200, MaxOutput: 64_000, Price: price(3.00, 0.30, 15.00, 3.75),
			Aliases: []string{"claude-sonnet-4-0"}, Wires: claude},
		{Name: "claude-haiku-4-5", ContextWindow: k200, MaxOutput: 64_000, Price: price(1.00, 0.10, 5.00, 1.25),
			Aliases: []string{"claude-haiku-4.5"}, Wires: claude},

		// Google, 2025-11, ai.google.dev/gemini-api/docs/pricing (paid tier, prompts <= 200k).
		{Name: "gemini-2.5-pro", ContextWindow: g1, MaxOutput: 65_536, Price: price(1.25, 0.125, 10.00, 0)},
		{Name: "gemini-2.5-flash", ContextWindow: g1, MaxOutput: 65_536, Price: price(0.30, 0.03, 2.50, 0)},
		{Name: "gemini-2.5-flash-lite", ContextWindow: g1, MaxOutput: 65_536, Price: price(0.10, 0.01, 0.40, 0)},

		// DeepSeek, V3.2-Exp prices from 2025-09-29, api-docs.deepseek.com/quick_start/pricing.
		{Name: "deepseek-chat", ContextWindow: k128, MaxOutput: 8_192, Price: price(0.28, 0.028, 0.42, 0)},
		{Name: "deepseek-reasoner", ContextWindow: k128, MaxOutput: 65_536, Price: price(0.28, 0.028, 0.42, 0)},

		// Mistral, 2025-11, mistral.ai/pricing; max output is not published separately.
		{Name: "mistral-large", ContextWindow: 131_072, Price: price(2.00, 0, 6.00, 0)},  // Large 2.1 (2411)
		{Name: "mistral-medium", ContextWindow: 131_072, Price: price(0.40, 0, 2.00, 0)}, // Medium 3.1 (2508)
		{Name: "mistral-small", ContextWindow: 131_072, Price: price(0.10, 0, 0.30, 0)},  // Small 3.2 (2506)
		{Name: "codestral", ContextWindow: 256_000, Price: price(0.30, 0, 0.90, 0)},      // Codestral 25.08
	}
}
